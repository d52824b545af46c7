// The one setting of a RabbitmqCluster's spec.rabbitmq.additionalConfig the topology controller
// reads: management.path_prefix, which moves the management API under a path. Read as upstream reads
// it (go-ini's defaults): the keys before the first [section], "=" or ":" between key and value, "#"
// and ";" start a comment, and one pair of surrounding quotes is taken off.

const pathPrefixKey = "management.path_prefix";

export function managementPathPrefix(additionalConfig: string | undefined): string {
  for (const raw of (additionalConfig ?? "").split(/\r?\n/)) {
    const line = raw.trim();
    if (line.startsWith("[")) break;
    if (!line || line.startsWith("#") || line.startsWith(";")) continue;
    const at = line.search(/[=:]/);
    if (at < 0 || line.slice(0, at).trim() !== pathPrefixKey) continue;
    return configValue(line.slice(at + 1).trim());
  }
  return "";
}

function configValue(text: string): string {
  const quoted = /^(["'])(.*)\1$/.exec(text);
  if (quoted) return quoted[2] ?? "";
  return text.replace(/[#;].*$/, "").trim();
}

/** `/prefix` from `prefix`, `/prefix` or `/prefix/`; "" for none. */
export function asPathPrefix(prefix: string): string {
  const trimmed = prefix.replace(/\/+$/, "");
  if (!trimmed) return "";
  return trimmed.startsWith("/") ? trimmed : `/${trimmed}`;
}
