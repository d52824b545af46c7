import { describe, expect, it } from "vitest";
import {
  FormatError,
  encodeParams,
  quoteAll,
  renderFormat,
  secretData,
  type ConnectionValues,
} from "./connection-secret.ts";

const values: ConnectionValues = {
  username: "cinder",
  password: "p@ss:w/rd?&",
  host: "mariadb.openstack.svc.cluster.local",
  port: 3306,
  database: "cinder",
  params: {},
};

describe("the Connection Secret", () => {
  it("holds the oslo.config snippet under database.conf by default, its values URL-encoded", () => {
    expect(secretData(undefined, values)).toEqual({
      "database.conf":
        "[database]\nconnection = mysql+pymysql://cinder:p%40ss%3Aw%2Frd%3F%26@mariadb.openstack.svc.cluster.local:3306/cinder?charset=utf8\n",
    });
  });

  it("adds the params to the snippet's charset, and brackets an IPv6 host", () => {
    const data = secretData(
      { key: "db.conf" },
      { ...values, host: "::1", params: { ssl_ca: "/ca.pem", charset: "utf8mb4" } },
    );
    expect(data["db.conf"]).toContain("@[::1]:3306/cinder?charset=utf8mb4&ssl_ca=%2Fca.pem\n");
  });

  it("renders upstream's placeholders, with Go's trimming, and writes the single keys that are set", () => {
    const data = secretData(
      {
        key: "DB_CONNECTION",
        format: "mysql://{{ .Username }}:{{.Password}}@{{ .Host }}:{{ .Port }}/{{ .Database }}{{ .Params }}",
        usernameKey: "username",
        passwordKey: "password",
        hostKey: "host",
        portKey: "port",
        databaseKey: "database",
      },
      { ...values, params: { b: "2", a: "x y" } },
    );
    expect(data).toEqual({
      DB_CONNECTION: expect.any(String),
      username: "cinder",
      password: "p@ss:w/rd?&",
      host: "mariadb.openstack.svc.cluster.local",
      port: "3306",
      database: "cinder",
    });
  });

  it("refuses template actions it does not implement, and takes a lone }} as text, as Go does", () => {
    expect(() => renderFormat("{{ .Secret }}", values)).toThrow(FormatError);
    expect(() => renderFormat("{{ .Username | urlquery }}", values)).toThrow(FormatError);
    expect(() => renderFormat("x {{ y", values)).toThrow(FormatError);
    expect(renderFormat("x }} y", values)).toBe("x }} y");
    expect(renderFormat("a  {{- .Port -}}  b", values)).toBe("a3306b");
    expect(renderFormat("{{ .Database }}", { ...values, database: undefined })).toBe("");
  });

  it("encodes params as Go's url.Values does: sorted, form-encoded", () => {
    expect(encodeParams({})).toBe("");
    expect(encodeParams({ b: "2", a: "x y" })).toBe("?a=x+y&b=2");
  });

  it("leaves no $ (oslo.config's interpolation) nor , in the snippet's URL", () => {
    const data = secretData(undefined, {
      ...values,
      username: "u$,",
      password: "p$$,@:/%#!*'()",
      database: "d$b",
      params: { x: "$," },
    });
    expect(data["database.conf"]).toBe(
      "[database]\nconnection = mysql+pymysql://u%24%2C:p%24%24%2C%40%3A%2F%25%23%21%2A%27%28%29@mariadb.openstack.svc.cluster.local:3306/d%24b?charset=utf8&x=%24%2C\n",
    );
  });

  it("renders OpenStack-Helm's .UsernameEncoded and .PasswordEncoded as Python's quote(safe='')", () => {
    expect(quoteAll("a-_.~Z9 /$,é")).toBe("a-_.~Z9%20%2F%24%2C%C3%A9");
    expect(renderFormat("{{ .UsernameEncoded }}:{{ .PasswordEncoded }}", { ...values, username: "u$" })).toBe(
      "u%24:p%40ss%3Aw%2Frd%3F%26",
    );
  });
});
