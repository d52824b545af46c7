/**
 * Orders strings by their UTF-16 code units, for sorts that only need one fixed order. `localeCompare`
 * would do too, but its first call loads ICU's collator into the process: about 3 MiB of resident memory.
 */
export const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
