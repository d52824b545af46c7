// The Kubernetes version that first accepts each CEL function in a CRD's x-kubernetes-validations rule,
// from the table "CEL options, language features, and libraries" of
// https://kubernetes.io/docs/reference/using-api/cel/. Validation rules themselves are on by default from
// 1.25 (beta; GA in 1.29), so everything "all Kubernetes versions" have is 1.25 here. A function missing
// from the table fails the test that uses it: look its library up and add it.

export interface KubeVersion {
  major: number;
  minor: number;
}

const v = (minor: number): KubeVersion => ({ major: 1, minor });

/** CRD validation rules, enabled by default (beta). */
export const VALIDATION_RULES = v(25);

const libraries: { library: string; since: KubeVersion; functions: string[] }[] = [
  {
    library: "standard macros and functions",
    since: VALIDATION_RULES,
    functions: [
      ...["has", "all", "exists", "exists_one", "map", "filter", "size", "matches", "startsWith"],
      ...["endsWith", "contains", "int", "uint", "double", "string", "bytes", "bool", "duration"],
      ...["timestamp", "type", "dyn", "getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear"],
      ...["getFullYear", "getHours", "getMilliseconds", "getMinutes", "getMonth", "getSeconds"],
    ],
  },
  {
    library: "extended strings library",
    since: VALIDATION_RULES,
    functions: [
      "charAt",
      "indexOf",
      "lastIndexOf",
      "lowerAscii",
      "upperAscii",
      "replace",
      "split",
      "join",
    ].concat(["substring", "trim"]),
  },
  {
    library: "Kubernetes list library",
    since: VALIDATION_RULES,
    functions: ["isSorted", "sum", "min", "max"],
  },
  { library: "Kubernetes regex library", since: VALIDATION_RULES, functions: ["find", "findAll"] },
  {
    library: "Kubernetes URL library",
    since: VALIDATION_RULES,
    functions: [
      "isURL",
      "url",
      "getScheme",
      "getHost",
      "getHostname",
      "getPort",
      "getEscapedPath",
      "getQuery",
    ],
  },
  {
    library: "Kubernetes quantity library",
    since: v(29),
    functions: [
      "quantity",
      "isQuantity",
      "sign",
      "isGreaterThan",
      "isLessThan",
      "compareTo",
      "add",
      "sub",
    ].concat(["asInteger", "asApproximateFloat", "isInteger"]),
  },
  {
    library: "CEL optional types",
    since: v(29),
    functions: [
      "optional.of",
      "optional.ofNonZeroValue",
      "optional.none",
      "orValue",
      "hasValue",
      "value",
      "or",
    ],
  },
  {
    library: "Kubernetes IP address library",
    since: v(31),
    functions: [
      "isIP",
      "ip",
      "family",
      "isCanonical",
      "isUnspecified",
      "isLoopback",
      "isLinkLocalMulticast",
    ].concat(["isLinkLocalUnicast", "isGlobalUnicast"]),
  },
  {
    library: "Kubernetes CIDR library",
    since: v(31),
    functions: ["cidr", "isCIDR", "containsIP", "containsCIDR", "masked", "prefixLength"],
  },
  { library: "Kubernetes format library", since: v(32), functions: ["format.named", "validate"] },
  {
    library: "Kubernetes semver library",
    since: v(34),
    functions: ["semver", "isSemver", "major", "minor", "patch"],
  },
];

/** Function name (namespaced ones as `ns.name`) -> the library and the version it arrived in. */
export const celFunctions: ReadonlyMap<string, { library: string; since: KubeVersion }> = new Map(
  libraries.flatMap(({ library, since, functions }) =>
    functions.map((f) => [f, { library, since }] as const),
  ),
);

/** The functions a rule calls; string literals are left out, `format.dns1123Label()` counts as format.named. */
export function functionsOf(rule: string): string[] {
  const code = rule.replace(
    /[rR]?('''[\s\S]*?'''|"""[\s\S]*?"""|'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*")/g,
    "''",
  );
  const found = new Set<string>();
  for (const m of code.matchAll(/(?:\b(optional|format)\s*\.\s*)?\b([A-Za-z_][A-Za-z0-9_]*)\s*\(/g)) {
    const [, namespace, name] = m;
    if (namespace === "format") found.add("format.named");
    else found.add(namespace ? `${namespace}.${name}` : (name ?? ""));
  }
  // Optional field selection and indexing, `self.?a` and `self[?'a']`.
  if (/\.\?|\[\?/.test(code)) found.add("optional.of");
  return [...found];
}

export function parseKubeVersion(text: string): KubeVersion {
  const m = /^v?(\d+)\.(\d+)/.exec(text.trim());
  if (!m) throw new Error(`not a Kubernetes version: ${text}`);
  return { major: Number(m[1]), minor: Number(m[2]) };
}

export const compareVersions = (a: KubeVersion, b: KubeVersion) => a.major - b.major || a.minor - b.minor;

export const formatVersion = (version: KubeVersion) => `${version.major}.${version.minor}`;
