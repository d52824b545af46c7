// The local environment's bao CLI, for tests that run a page's commands as a person pastes them.
import { existsSync, readdirSync } from "node:fs";
import { homedir } from "node:os";

/** The bao binary scripts/localenv/openbao.sh put in the cache. */
export function baoBinary(): string {
  const root = `${process.env.VHOST_BROKER_CACHE ?? `${homedir()}/.cache/vhost-broker`}/openbao`;
  const found = readdirSync(root)
    .map((version) => `${root}/${version}/bin/bao`)
    .find((path) => existsSync(path));
  if (!found) throw new Error(`no bao under ${root}`);
  return found;
}
