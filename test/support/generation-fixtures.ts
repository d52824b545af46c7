// src/**/*.test.ts import this fake here until their import lines name harness/fakes/generation-fixtures.ts.
export * from "../../harness/fakes/generation-fixtures.ts";
