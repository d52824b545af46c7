// The order's lifecycle with the operator as its users run it (`node src/main.ts`, the built-in topology
// controller serving the Vhost, User and Permission CRs on the local broker): legs 1, 2, 4 and 5 of the
// original scenario (e2e/support/order-lifecycle.ts).
import { describeOrderLifecycle } from "./support/order-lifecycle.ts";

describeOrderLifecycle("the order's lifecycle, operator process", { prefix: "ordop" });
