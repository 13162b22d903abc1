/**
 * A plant's version and its entity tag (RFC 9110 §8.8.3), and the `If-Match` / `If-None-Match`
 * lists they are compared with.
 *
 * The version is a number stored with the item (`version`): the time of the change in
 * microseconds since the epoch, or one more than the previous version when the clock has not
 * passed it, so it only grows while the plant exists (why: docs/decisions/
 * versions-in-microseconds.md). Items written before versions existed have none: version 0.
 */

/** The item attribute that holds the version. */
export const versionAttribute = 'version';

/** The version of an item written before versions existed. */
export const unversioned = 0;

/**
 * The highest version a plant can have: the one after it, 2^53 − 1, is still exact, so every
 * ETag of ours can be parsed and compared. Clock versions stay below it until the year 2255.
 */
export const maxVersion = Number.MAX_SAFE_INTEGER - 1;

/**
 * The clock versions are taken from: the wall clock in microseconds since the epoch. Its readings
 * are whole milliseconds (`Date.now()`); the microseconds are room for the versions that follow
 * within one millisecond (the stored one + 1), so a burst of changes stays within the clock's
 * millisecond.
 */
export function versionClock(): number {
  return Date.now() * 1000;
}

/** The version a change writes, after `current`, at `now` (a {@link versionClock} reading). */
export function nextVersion(current: number, now: number): number {
  return Math.max(current + 1, Math.trunc(now));
}

/**
 * The version of an item read with `wrapNumbers`: {@link unversioned} when it has none,
 * `undefined` when its version is not a whole number from 0 to {@link maxVersion} (not written
 * by the API).
 */
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

/**
 * One member of a list and what follows it: `W/` (case-sensitive) or not, a quoted opaque tag of
 * the characters RFC 9110 allows (a comma among them), then a comma or the end.
 */
const listMember = /^[\t ]*(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"[\t ]*(?:,|$)/;

/**
 * Reads a header's field value: `*`, or a comma-separated list of entity tags (empty members
 * allowed, as lists in RFC 9110 §5.6.1 are). A list that is not valid (an unquoted tag, say)
 * matches nothing, as RFC 9110 §13.1 lets a server treat it.
 */
export function parseEntityTagList(value: string): EntityTagList {
  if (value.trim() === '*') return { any: true };
  const tags: EntityTag[] = [];
  for (let rest = value.replace(/^[\t ,]+/, ''); rest !== ''; ) {
    const match = listMember.exec(rest);
    if (match === null) return { any: false, tags: [] };
    rest = rest.slice(match[0].length).replace(/^[\t ,]+/, '');
    const opaque = match[2] as string;
    const version = /^(0|[1-9][0-9]{0,15})$/.test(opaque) ? Number(opaque) : undefined;
    tags.push({
      weak: match[1] !== undefined,
      version: version !== undefined && version <= maxVersion ? version : undefined,
    });
  }
  return { any: false, tags };
}

/**
 * The versions `If-Match` accepts: strong comparison, so a weak tag never matches (RFC 9110
 * §13.1.1). `undefined` for `*` (any version).
 */
export function versionsMatchedBy(list: EntityTagList): readonly number[] | undefined {
  if (list.any) return undefined;
  return list.tags.flatMap((tag) => (!tag.weak && tag.version !== undefined ? [tag.version] : []));
}

/** Whether `If-None-Match` matches `version`: weak comparison (RFC 9110 §13.1.2). */
export function matchesWeakly(list: EntityTagList, version: number): boolean {
  return list.any || list.tags.some((tag) => tag.version === version);
}

/**
 * The condition terms (to be joined by OR) that an item has `version`, whose value is named
 * `value`; the item's version attribute is `#version`. Version 0 is also an item stored before
 * versions existed, which has no version attribute.
 */
export function hasVersionTerms(version: number, value: string): string[] {
  const terms = [`#version = ${value}`];
  if (version === unversioned) terms.unshift('attribute_not_exists(#version)');
  return terms;
}
