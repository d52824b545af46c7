import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["src/**/*.test.ts", "test/**/*.test.ts", "harness/**/*.test.ts"],
        },
      },
      {
        test: {
          name: "integration",
          include: ["test/**/*.itest.ts", "e2e/**/*.itest.ts"],
          // The local environment is brought up once per run (or reused) and shared by every file.
          globalSetup: ["harness/world/global-setup.ts"],
          testTimeout: 120_000,
          hookTimeout: 600_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
