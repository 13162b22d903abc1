/**
 * The stages as the tests read them: synthesized once per change of the app, not once per test
 * file. The assembly (dev and prod, bundled, checked by cdk-nag) is kept under
 * `.data/synth/<fingerprint>/`, where the fingerprint covers everything a synth reads from the
 * repository (`infra/`, `functions/`, `cdk.json`, the lock file): a run after an edit synthesizes
 * again, a run without one reuses it. Jest's global setup makes it before any worker starts
 * (`test/support/global-setup.ts`), so the files that read templates run in parallel on it.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import path from 'node:path';

const repositoryRoot = path.resolve(import.meta.dirname, '../..');

/** What a synth reads: the app, the functions it bundles, its settings and the locked packages. */
const inputs = [
  'infra',
  'functions',
  'cdk.json',
  'package-lock.json',
  'test/support/synthesize-stages.ts',
];

/** The stage names the assembly holds. */
export const assemblyStages = ['dev', 'prod'] as const;

function filesUnder(relative: string): string[] {
  const absolute = path.join(repositoryRoot, relative);
  if (!existsSync(absolute)) return [];
  const entries = readdirSync(absolute, { withFileTypes: true, recursive: true });
  if (entries.length === 0 && !absolute.endsWith('/')) {
    return [relative];
  }
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(repositoryRoot, path.join(entry.parentPath, entry.name)));
}

/** The fingerprint of the synth's inputs (paths and contents). */
export function synthFingerprint(): string {
  const hash = createHash('sha256');
  const files = inputs
    .flatMap((input) => (input.includes('.') ? [input] : filesUnder(input)))
    .sort();
  for (const file of files) {
    hash
      .update(file)
      .update('\0')
      .update(readFileSync(path.join(repositoryRoot, file)))
      .update('\0');
  }
  hash.update(process.version.split('.')[0] ?? '');
  return hash.digest('hex').slice(0, 16);
}

/** The variable naming the run's assembly to the test workers. */
export const assemblyDirectoryVariable = 'PLANT_STORE_TEST_ASSEMBLY';

/** The folder of the run's assembly, or of the one for the current inputs. */
export function assemblyDirectory(): string {
  return (
    process.env[assemblyDirectoryVariable] ??
    path.join(repositoryRoot, '.data', 'synth', synthFingerprint())
  );
}

/**
 * Makes the assembly unless it is there already (a child `node` runs the synth, so the CDK's
 * memory goes with it); older assemblies are removed. Resolves with its folder.
 * @throws Error with the synth's output when it fails.
 */
export function ensureSynthesizedAssembly(): string {
  const directory = path.join(repositoryRoot, '.data', 'synth', synthFingerprint());
  if (existsSync(path.join(directory, 'complete'))) return directory;
  const parent = path.dirname(directory);
  mkdirSync(parent, { recursive: true, mode: 0o700 });
  const building = `${directory}.${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  const result = spawnSync(
    process.execPath,
    [path.join(repositoryRoot, 'test/support/synthesize-stages.ts'), building],
    { cwd: repositoryRoot, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  if (result.status !== 0) {
    rmSync(building, { recursive: true, force: true });
    throw new Error(`The test synth failed:\n${result.stdout}\n${result.stderr}`);
  }
  renameSync(building, directory);
  // The newest few stay: another run may still be reading one.
  const kept = readdirSync(parent)
    .map((name) => ({ name, at: statSync(path.join(parent, name)).mtimeMs }))
    .sort((a, b) => b.at - a.at);
  for (const { name } of kept.slice(3))
    rmSync(path.join(parent, name), { recursive: true, force: true });
  return directory;
}
