// The commands of docs/install.md and the pages its path continues on, read as a person pastes them:
// the fenced sh blocks in page order, continuation lines joined, every heredoc's body kept with the
// command that reads it (a values file `cat` writes, a manifest `kubectl apply -f -` applies).
import { readFileSync } from "node:fs";
import { parse } from "yaml";

/** The pages of the install path, in the order a person follows them. */
export const INSTALL_PAGES = ["docs/install.md", "docs/secret-namespaces.md"] as const;

export const readPage = (path: string): string =>
  readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");

export interface Block {
  page: string;
  lang: string;
  text: string;
}

export interface Command {
  page: string;
  /** The command line, continuation lines joined, without the heredoc. */
  line: string;
  words: string[];
  /** The body of the heredoc the command reads, if any. */
  heredoc?: string;
}

/** The fenced code blocks of a page, with their language. */
export function blocksOf(page: string, text = readPage(page)): Block[] {
  return [...text.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((m) => ({
    page,
    lang: m[1] ?? "",
    text: m[2] ?? "",
  }));
}

/**
 * Splits a command line into words as a shell would for the cases the pages use: single and double
 * quotes, `$(...)` kept whole, a `#` comment after whitespace dropped.
 */
export function wordsOf(line: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (c === "'" || c === '"') {
      const end = line.indexOf(c, i + 1);
      if (end < 0) throw new Error(`unbalanced ${c} in: ${line}`);
      word += line.slice(i + 1, end);
      inWord = true;
      i = end;
    } else if (c === "$" && line[i + 1] === "(") {
      let depth = 0;
      let j = i + 1;
      for (; j < line.length; j++) {
        if (line[j] === "(") depth++;
        else if (line[j] === ")" && --depth === 0) break;
      }
      word += line.slice(i, j + 1);
      inWord = true;
      i = j;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else if (c === "#" && !inWord) {
      break;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}

/** The commands of one sh block, a heredoc's body attached to the command that opens it. */
export function commandsOf(block: Block): Command[] {
  const lines = block.text.split("\n");
  const commands: Command[] = [];
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i] ?? "";
    while (line.endsWith("\\") && i + 1 < lines.length) line = `${line.slice(0, -1)} ${lines[++i]?.trim()}`;
    if (line.trim() === "" || line.trim().startsWith("#")) continue;
    const opener = /<<-?\s*(['"]?)(\w+)\1/.exec(line);
    let heredoc: string | undefined;
    if (opener) {
      const end = lines.indexOf(opener[2] as string, i + 1);
      if (end < 0) throw new Error(`${block.page}: heredoc ${opener[2]} never ends`);
      heredoc = lines.slice(i + 1, end).join("\n") + "\n";
      i = end;
      line = line.replace(opener[0], "").trimEnd();
    }
    commands.push({
      page: block.page,
      line: line.trim(),
      words: wordsOf(line),
      ...(heredoc ? { heredoc } : {}),
    });
  }
  return commands;
}

/** Every command of the install path, in the order a person runs them. */
export function installCommands(): Command[] {
  return INSTALL_PAGES.flatMap((page) =>
    blocksOf(page)
      .filter((b) => b.lang === "sh")
      .flatMap(commandsOf),
  );
}

/** The file a `cat >file <<'EOF'` writes, or undefined. */
export function writtenFile(command: Command): string | undefined {
  if (command.words[0] !== "cat" || command.heredoc === undefined) return undefined;
  const target = command.words.find((w) => w.startsWith(">"));
  return target?.replace(/^>+/, "");
}

/** Whether the command applies its heredoc as manifests (`kubectl apply -f -`). */
export function appliesManifest(command: Command): boolean {
  const w = command.words;
  return w[0] === "kubectl" && w.includes("apply") && w.includes("-") && command.heredoc !== undefined;
}

export interface HelmCommand {
  verb: string;
  release: string;
  chart: string;
  namespace?: string;
  valuesFiles: string[];
  /** `--set` keys with their text values. */
  set: [string, string][];
  flags: string[];
}

/** A `helm install` or `helm upgrade`, or undefined for any other command. */
export function helmCommand(command: Command): HelmCommand | undefined {
  const [tool, verb, ...rest] = command.words;
  if (tool !== "helm" || (verb !== "install" && verb !== "upgrade")) return undefined;
  const positional: string[] = [];
  const parsed: HelmCommand = { verb, release: "", chart: "", valuesFiles: [], set: [], flags: [] };
  for (let i = 0; i < rest.length; i++) {
    const word = rest[i] as string;
    const [flag, inline] =
      word.startsWith("--") && word.includes("=") ? word.split(/=(.*)/s) : [word, undefined];
    const value = () => inline ?? rest[++i] ?? "";
    if (flag === "-n" || flag === "--namespace") parsed.namespace = value();
    else if (flag === "-f" || flag === "--values") parsed.valuesFiles.push(value());
    else if (flag === "--set" || flag === "--set-string") {
      for (const pair of value().split(/(?<!\\),/)) {
        const eq = pair.indexOf("=");
        parsed.set.push([pair.slice(0, eq), pair.slice(eq + 1)]);
      }
    } else if (flag?.startsWith("-")) parsed.flags.push(flag);
    else positional.push(word);
  }
  [parsed.release, parsed.chart] = [positional[0] ?? "", positional[1] ?? ""];
  return parsed;
}

const isMap = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);

/** Helm's merge of values files: maps merged key by key, anything else replaced. */
export function mergeValues(
  base: Record<string, unknown>,
  over: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const prior = out[key];
    out[key] = isMap(prior) && isMap(value) ? mergeValues(prior, value) : value;
  }
  return out;
}

/** A values tree with `--set a.b=c` applied (helm's type guessing: booleans and integers). */
export function setValue(values: Record<string, unknown>, key: string, text: string): void {
  const parts = key.split(".");
  let node = values;
  for (const part of parts.slice(0, -1)) {
    if (!isMap(node[part])) node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  node[parts.at(-1) as string] =
    text === "true" ? true : text === "false" ? false : /^-?\d+$/.test(text) ? Number(text) : text;
}

export interface HelmRun {
  command: Command;
  helm: HelmCommand;
  /** The files the command passes, each one the page wrote before it, in order. */
  files: { name: string; text: string | undefined }[];
  /** What the files and `--set`s give, over the chart's defaults. */
  values: Record<string, unknown>;
}

/** Every helm install and upgrade of the path, with the values it passes. */
export function helmRuns(commands: Command[]): HelmRun[] {
  const written = new Map<string, string>();
  const runs: HelmRun[] = [];
  for (const command of commands) {
    const file = writtenFile(command);
    if (file) written.set(file, command.heredoc ?? "");
    const helm = helmCommand(command);
    if (!helm) continue;
    const files = helm.valuesFiles.map((name) => ({ name, text: written.get(name) }));
    let values: Record<string, unknown> = {};
    for (const f of files)
      values = mergeValues(values, (parse(f.text ?? "") ?? {}) as Record<string, unknown>);
    for (const [key, text] of helm.set) setValue(values, key, text);
    runs.push({ command, helm, files, values });
  }
  return runs;
}
