// A TCP port as a Secret or a published endpoint writes it, read one way for every backend: the
// order's endpoints, a RabbitMQ default-user Secret and a MariaDB credentials Secret.

export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

/** A TCP port: decimal digits only, 1-65535. */
export function parsePort(text: string): Parsed<number> {
  if (!/^[0-9]+$/.test(text)) return { ok: false, message: `port "${text}" is not a decimal number` };
  // Compared as text first so that a long digit string cannot overflow into a valid-looking number.
  const digits = text.replace(/^0+(?=.)/, "");
  const port = digits.length <= 5 ? Number(digits) : Infinity;
  if (port < 1 || port > 65535) return { ok: false, message: `port "${text}" is outside 1-65535` };
  return { ok: true, value: port };
}
