/**
 * Where `npm start`'s stream mapping has read to, shard by shard, kept in a file after every
 * batch it hands on, as Lambda's mapping keeps its position: a start after a crash (SIGKILL, a
 * power cut) resumes after the last record handed on, instead of at the stream's end, so no
 * plant stored meanwhile is skipped. Written to a temporary file and renamed: whole or not at all.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import * as v from 'valibot';

const checkpointSchema = v.object({
  streamArn: v.string(),
  shards: v.record(
    v.string(),
    v.object({
      parent: v.optional(v.string()),
      after: v.optional(v.string()),
      closed: v.boolean(),
    }),
  ),
});

/** A shard's place: its parent, the last sequence number handed on, and whether it has ended. */
export interface ShardPlace {
  readonly parent: string | undefined;
  readonly after?: string;
  readonly closed: boolean;
}

/** The places kept in `file` for `streamArn`; none when there is no file or it is another stream's. */
export function readStreamCheckpoint(
  file: string | undefined,
  streamArn: string,
): ReadonlyMap<string, ShardPlace> | undefined {
  if (file === undefined || !existsSync(file)) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
  const kept = v.safeParse(checkpointSchema, json);
  if (!kept.success || kept.output.streamArn !== streamArn) return undefined;
  return new Map(
    Object.entries(kept.output.shards).map(([shardId, place]) => [
      shardId,
      {
        parent: place.parent,
        closed: place.closed,
        ...(place.after === undefined ? {} : { after: place.after }),
      },
    ]),
  );
}

/** Keeps the shards' places in `file`. */
export function writeStreamCheckpoint(
  file: string,
  streamArn: string,
  shards: ReadonlyMap<string, ShardPlace>,
): void {
  const partial = `${file}.partial`;
  const places = Object.fromEntries(
    [...shards].map(([shardId, { parent, after, closed }]) => [shardId, { parent, after, closed }]),
  );
  writeFileSync(partial, JSON.stringify({ streamArn, shards: places }), { mode: 0o600 });
  renameSync(partial, file);
}
