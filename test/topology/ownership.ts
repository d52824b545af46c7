// Ownership settings for tests that want the built-in controller to serve every object.
import type { OwnershipSettings } from "../../src/topology/index.ts";

export const serveEverything: OwnershipSettings = {
  enabled: true,
  clusters: { serve: "all" },
  connectionSecrets: true,
};
