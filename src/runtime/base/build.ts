import { readFileSync } from "node:fs";

// What this build is: the name and version of package.json, three folders above this file both in the
// sources (src/runtime/base) and in the image (/app/dist/runtime/base, with /app/package.json), and the
// source commit, which scripts/image.sh sets in the image's environment as VHOST_BROKER_REVISION; it is
// "unknown" where nothing sets it (the operator run from a checkout, an image built otherwise).

export interface Build {
  name: string;
  version: string;
  revision: string;
}

const packageJson = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as {
  name: string;
  version: string;
};

/** The build, with the revision from `env`. */
export function readBuild(env: Record<string, string | undefined>): Build {
  const revision = env["VHOST_BROKER_REVISION"]?.trim();
  return { name: packageJson.name, version: packageJson.version, revision: revision ? revision : "unknown" };
}

export const build: Build = readBuild(process.env);

/** What `--version` prints: `vhost-broker 0.1.0 (revision 1a2b…)`. */
export const versionLine = (b: Build = build): string => `${b.name} ${b.version} (revision ${b.revision})`;

/** Go's names for Node's platforms and architectures, as client-go writes them. */
const goOs: Partial<Record<NodeJS.Platform, string>> = { win32: "windows" };
const goArch: Record<string, string> = { x64: "amd64", ia32: "386" };

/**
 * The User-Agent of the requests to the API servers, in client-go's shape
 * (`kube-controller-manager/v1.33.0 (linux/amd64) kubernetes/<commit>`) with the component that makes
 * them where client-go names the commit: audit logs and API Priority and Fairness rules key on it.
 */
export function userAgent(
  component: string,
  platform: NodeJS.Platform = process.platform,
  arch: string = process.arch,
): string {
  return `${build.name}/${build.version} (${goOs[platform] ?? platform}/${goArch[arch] ?? arch}) ${component}`;
}
