/**
 * Jest's global setup for the tiers that read the synthesized stages: makes the assembly once
 * (`synthesized-assembly.ts`) before any test file starts.
 */
import { ensureSynthesizedAssembly } from './synthesized-assembly.ts';

export default function globalSetup(): void {
  ensureSynthesizedAssembly();
}
