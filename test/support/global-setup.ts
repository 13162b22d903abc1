/**
 * Jest's global setup for the tiers that read the synthesized stages: makes the assembly once
 * (`synthesized-assembly.ts`) before any test file starts, and names it to the workers, so a
 * file edited while the tests run does not move them to another.
 */
import { assemblyDirectoryVariable, ensureSynthesizedAssembly } from './synthesized-assembly.ts';

export default function globalSetup(): void {
  process.env[assemblyDirectoryVariable] = ensureSynthesizedAssembly();
}
