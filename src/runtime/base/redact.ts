// Redaction of secrets in anything that may reach a log line, an event or a condition message:
// values under secret-looking keys, credentials inside URLs, bearer tokens, PEM keys and whole
// kubeconfigs found in strings; and `scrub` for the secrets a caller knows by value.

export const REDACTED = "[REDACTED]";

const secretKey =
  /pass(word|wd)?$|secret|token|kubeconfig|authorization|credential|transport_?url|private_?key|(client|key)-?key-?data|^key$|cookie|api_?key/i;

const stringRules: [RegExp, string][] = [
  // Any URL with user information, e.g. rabbit://user:pass@host or amqp://user:pass@host.
  [/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@"']+@/gi, `$1${REDACTED}@`],
  // Further hosts of a multi-host transport URL: rabbit://u:p@h1:5672,u:p@h2:5672/.
  [/([,;])[^\s/@,;"']+:[^\s/@,;"']*@/g, `$1${REDACTED}@`],
  [/\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+/gi, `$1 ${REDACTED}`],
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)/g, REDACTED],
  [/((?:token|password|client-key-data|client-certificate-data)\s*[:=]\s*)("[^"]*"|\S+)/gi, `$1${REDACTED}`],
];

/** A kubeconfig carries credentials as a whole: never keep any of it. */
function looksLikeKubeconfig(text: string): boolean {
  return /\bkind:\s*Config\b/.test(text) && /\b(clusters|users):/.test(text);
}

/**
 * Every rule above (and a kubeconfig) needs one of these characters: a name, a namespace or an id has
 * none, and is let through without the rules (a logger's bindings are redacted on every pass).
 */
const mayHoldSecret = /[@:=\s]/;

export function redactString(text: string): string {
  if (!mayHoldSecret.test(text)) return text;
  if (looksLikeKubeconfig(text)) return REDACTED;
  let out = text;
  for (const [pattern, replacement] of stringRules) out = out.replace(pattern, replacement);
  return out;
}

/** A copy of `value` with secrets replaced; errors become plain objects keeping type, message and stack. */
export function redact(value: unknown, seen = new WeakSet<object>()): unknown {
  if (typeof value === "string") return redactString(value);
  if (value === null || typeof value !== "object") return value;
  if (seen.has(value)) return "[Circular]";
  seen.add(value);
  if (Array.isArray(value)) return value.map((v) => redact(v, seen));
  if (value instanceof Error) {
    const plain: Record<string, unknown> = { type: value.name, message: redactString(value.message) };
    if (value.stack) plain.stack = redactString(value.stack);
    for (const [k, v] of Object.entries(value)) plain[k] = secretKey.test(k) ? REDACTED : redact(v, seen);
    if (value.cause !== undefined) plain.cause = redact(value.cause, seen);
    return plain;
  }
  if (value instanceof Date) return value;
  if (value instanceof Uint8Array) return REDACTED;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = secretKey.test(k) && v !== undefined && v !== null && v !== "" ? REDACTED : redact(v, seen);
  }
  return out;
}

/** Replaces every occurrence of the given secrets in `text`, so that an error message cannot carry them. */
export function scrub(text: string, secrets: Iterable<string | undefined>): string {
  let out = text;
  // Longest first, so that a secret containing another is replaced whole. A short password still goes:
  // a blanked word in a message costs less than a leaked secret.
  const values = [...secrets].filter((s): s is string => !!s).sort((a, b) => b.length - a.length);
  for (const s of values) out = out.replaceAll(s, "[redacted]");
  return out;
}
