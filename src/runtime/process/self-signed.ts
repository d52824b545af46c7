import { generateKeyPairSync, randomBytes, sign } from "node:crypto";

// A self-signed ECDSA P-256 certificate for /metrics when no certificate is mounted, as
// controller-runtime generates one. Node can sign but not build X.509, so the few DER structures a
// certificate needs are encoded here.

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v >>= 8) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

const tlv = (tag: number, ...content: Buffer[]): Buffer => {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), length(body.length), body]);
};
const sequence = (...items: Buffer[]) => tlv(0x30, ...items);

function oid(text: string): Buffer {
  const [a = 0, b = 0, ...rest] = text.split(".").map(Number);
  const bytes = [a * 40 + b];
  for (const n of rest) {
    const chunk = [n & 0x7f];
    for (let v = n >> 7; v > 0; v >>= 7) chunk.unshift(0x80 | (v & 0x7f));
    bytes.push(...chunk);
  }
  return tlv(0x06, Buffer.from(bytes));
}

/** UTCTime, valid for the years before 2050. */
function utcTime(date: Date): Buffer {
  const text = date.toISOString().replace(/[-:T]/g, "").slice(2, 14) + "Z";
  return tlv(0x17, Buffer.from(text, "ascii"));
}

const ECDSA_SHA256 = sequence(oid("1.2.840.10045.4.3.2"));

export interface KeyAndCertificate {
  key: string;
  cert: string;
}

/** A key and a certificate for `hosts` (DNS names and IPv4 addresses), valid for a year from `now`. */
export function selfSignedCertificate(hosts: string[], now = new Date()): KeyAndCertificate {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const serial = randomBytes(16);
  serial[0] = (serial[0] ?? 0) & 0x7f;
  const name = sequence(
    tlv(0x31, sequence(oid("2.5.4.3"), tlv(0x0c, Buffer.from("vhost-broker-metrics", "utf8")))),
  );
  const altNames = hosts.map((h) =>
    /^\d+\.\d+\.\d+\.\d+$/.test(h)
      ? tlv(0x87, Buffer.from(h.split(".").map(Number)))
      : tlv(0x82, Buffer.from(h, "ascii")),
  );
  const subjectAltName = sequence(oid("2.5.29.17"), tlv(0x04, sequence(...altNames)));
  const tbs = sequence(
    tlv(0xa0, tlv(0x02, Buffer.from([2]))),
    tlv(0x02, serial),
    ECDSA_SHA256,
    name,
    sequence(utcTime(now), utcTime(new Date(now.getTime() + 365 * 24 * 3600_000))),
    name,
    publicKey.export({ type: "spki", format: "der" }),
    tlv(0xa3, sequence(subjectAltName)),
  );
  const signature = sign("sha256", tbs, { key: privateKey, dsaEncoding: "der" });
  const der = sequence(tbs, ECDSA_SHA256, tlv(0x03, Buffer.from([0]), signature));
  const lines = der.toString("base64").match(/.{1,64}/g) ?? [];
  return {
    key: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    cert: `-----BEGIN CERTIFICATE-----\n${lines.join("\n")}\n-----END CERTIFICATE-----\n`,
  };
}
