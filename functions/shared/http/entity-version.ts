/**
 * A plant's version and entity tag (RFC 9110 §8.8.3), and the `If-Match` / `If-None-Match` lists
 * compared with it. Versions are clock readings that only grow while a plant exists
 * (docs/decisions/versions-in-microseconds.md); items older than versions have none: 0.
 */
export const versionAttribute = 'version';
/** The version of an item written before versions existed. */
export const unversioned = 0;

/** The highest version: the next, 2^53 − 1, is still exact. Clocks reach it in 2255. */
export const maxVersion = Number.MAX_SAFE_INTEGER - 1;

/** Microseconds since the epoch, in whole milliseconds: the rest is room for bursts (+1). */
export function versionClock(): number {
  return Date.now() * 1000;
}

/** The version a change writes, after `current`, at `now` (a {@link versionClock} reading). */
export function nextVersion(current: number, now: number): number {
  return Math.max(current + 1, Math.trunc(now));
}

/** An item's version: 0 when it has none, `undefined` when not one the API could write. */
export function readItemVersion(item: Readonly<Record<string, unknown>>): number | undefined {
  const stored = item[versionAttribute];
  if (stored === undefined) return unversioned;
  const text = (stored as { value?: unknown }).value;
  if (typeof text !== 'string' || !/^(0|[1-9][0-9]{0,15})$/.test(text)) return undefined;
  const version = Number(text);
  return version <= maxVersion ? version : undefined;
}

/** The strong entity tag of a version: `"1764000000000000"`. */
export function entityTagOf(version: number): string {
  return `"${version}"`;
}

/** A parsed `If-Match` or `If-None-Match`: `*`, or the listed entity tags. */
export type EntityTagList =
  | { readonly any: true }
  | { readonly any: false; readonly tags: readonly EntityTag[] };

export interface EntityTag {
  readonly weak: boolean;
  /** The version the tag names, or `undefined` when it names none of ours (never matches). */
  readonly version: number | undefined;
}

/** One list member (`W/` or not, a quoted opaque tag) and a comma or the end. */
const listMember = /^[\t ]*(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"[\t ]*(?:,|$)/;

/** `*` or entity tags (empty members allowed, RFC 9110 §5.6.1); an invalid list matches none. */
export function parseEntityTagList(value: string): EntityTagList {
  if (value.trim() === '*') return { any: true };
  const tags: EntityTag[] = [];
  for (let rest = value.replace(/^[\t ,]+/, ''); rest !== ''; ) {
    const match = listMember.exec(rest);
    if (match === null) return { any: false, tags: [] };
    rest = rest.slice(match[0].length).replace(/^[\t ,]+/, '');
    const opaque = match[2] as string;
    const version = /^(0|[1-9][0-9]{0,15})$/.test(opaque) ? Number(opaque) : undefined;
    const ours = version !== undefined && version <= maxVersion;
    tags.push({ weak: match[1] !== undefined, version: ours ? version : undefined });
  }
  return { any: false, tags };
}

/** The versions `If-Match` accepts, strongly compared (RFC 9110 §13.1.1); `undefined` for `*`. */
export function versionsMatchedBy(list: EntityTagList): readonly number[] | undefined {
  if (list.any) return undefined;
  return list.tags.flatMap((tag) => (!tag.weak && tag.version !== undefined ? [tag.version] : []));
}

/** Whether `If-None-Match` matches `version`: weak comparison (RFC 9110 §13.1.2). */
export function matchesWeakly(list: EntityTagList, version: number): boolean {
  return list.any || list.tags.some((tag) => tag.version === version);
}

/** The condition terms (joined by OR) that `#version` is `version`; 0 is also no attribute. */
export function hasVersionTerms(version: number, value: string): string[] {
  const terms = [`#version = ${value}`];
  if (version === unversioned) terms.unshift('attribute_not_exists(#version)');
  return terms;
}
