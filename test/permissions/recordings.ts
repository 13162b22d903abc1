/**
 * Where the tiers that drive AWS's APIs (on MiniStack) record the calls they make, for the
 * permissions tier: `.data/aws-calls/<tier>.jsonl`, and `<file>.<stack>.stack.json` for each stack
 * deployed there (`local/ministack/aws-call-recorder.ts`, `local/ministack/ministack.ts`).
 */
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';

export const recordingsDirectory = path.resolve(import.meta.dirname, '../../.data/aws-calls');

/** The account and region MiniStack deploys to, as the recorded ARNs name them. */
export const recordedAccount = '000000000000';
export const recordedRegion = 'us-east-1';

/** Starts `tier`'s recording afresh, and names it for every MiniStack this process starts. */
export function recordAwsCalls(tier: string): string {
  mkdirSync(recordingsDirectory, { recursive: true, mode: 0o700 });
  const file = path.join(recordingsDirectory, `${tier}.jsonl`);
  // The calls and every stack of an earlier recording of the tier.
  for (const entry of readdirSync(recordingsDirectory)) {
    if (entry === `${tier}.jsonl` || entry.startsWith(`${tier}.jsonl.`)) {
      rmSync(path.join(recordingsDirectory, entry), { force: true });
    }
  }
  process.env.PLANT_STORE_AWS_CALLS = file;
  return file;
}

/** The role a pipeline job assumes, as an ARN in the emulated account. */
export function roleArn(roleName: string): string {
  return `arn:aws:iam::${recordedAccount}:role/${roleName}`;
}
