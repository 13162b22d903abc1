/** The repository's TypeScript files under some folders, for tests that read every one. */
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

export const root = path.resolve(import.meta.dirname, '../..');

/** Every `.ts` file under `folders` (relative to the root), `node_modules` left out. */
export function sourceFiles(folders: readonly string[]): string[] {
  const walk = (folder: string): string[] =>
    readdirSync(folder).flatMap((name) => {
      const file = path.join(folder, name);
      if (statSync(file).isDirectory()) return name === 'node_modules' ? [] : walk(file);
      return file.endsWith('.ts') ? [file] : [];
    });
  return folders.flatMap((folder) => {
    try {
      return walk(path.join(root, folder));
    } catch {
      return [];
    }
  });
}
