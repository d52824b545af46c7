import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["node_modules/", ".localenv/", "coverage/", "dist/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", ignoreRestSiblings: true }],
      // The package's index loads every function it has (about 300 MB of heap at start-up).
      "no-restricted-imports": [
        "error",
        {
          paths: [
            {
              name: "date-fns",
              message: 'Import each function from its own path, e.g. "date-fns/addMilliseconds".',
            },
          ],
        },
      ],
    },
  },
  {
    files: ["src/**/*.ts"],
    ignores: ["src/**/*.test.ts"],
    rules: {
      // Its first call loads ICU's collator into the operator: about 3 MiB of resident memory.
      "no-restricted-properties": [
        "error",
        { property: "localeCompare", message: "Sort with byCodeUnits (src/runtime/base/code-units.ts)." },
      ],
    },
  },
);
