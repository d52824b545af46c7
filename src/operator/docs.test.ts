import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { operatorSettings } from "./settings.ts";

it("documents every setting in docs/operator.md", () => {
  const page = readFileSync(new URL("../../docs/operator.md", import.meta.url), "utf8");
  for (const name of Object.keys(operatorSettings)) expect(page).toContain(`--${name},`);
});
