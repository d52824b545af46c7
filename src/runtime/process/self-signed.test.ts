import { X509Certificate, createPrivateKey } from "node:crypto";
import { describe, expect, it } from "vitest";
import { selfSignedCertificate } from "./self-signed.ts";

describe("selfSignedCertificate", () => {
  it("is a valid X.509 certificate for the hosts, signed by its own key, valid for a year", () => {
    const now = new Date("2026-03-01T10:00:00Z");
    const { key, cert } = selfSignedCertificate(["localhost", "127.0.0.1"], now);
    const x509 = new X509Certificate(cert);
    expect(x509.subjectAltName).toBe("DNS:localhost, IP Address:127.0.0.1");
    expect(x509.verify(x509.publicKey)).toBe(true);
    expect(x509.checkPrivateKey(createPrivateKey(key))).toBe(true);
    expect(new Date(x509.validFrom).toISOString()).toBe("2026-03-01T10:00:00.000Z");
    expect(new Date(x509.validTo).toISOString()).toBe("2027-03-01T10:00:00.000Z");
  });
});
