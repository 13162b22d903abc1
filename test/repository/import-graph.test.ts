/**
 * No module imports itself through others, type imports included: a circle makes a reader hold
 * several files at once, and a runtime one can leave a binding undefined at start-up.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from '@jest/globals';
import { root, sourceFiles } from './source-files.ts';

const folders = [
  'functions',
  'infra',
  'local',
  'beds',
  'bench',
  'clients/typescript/src',
  'lambda-image',
  'test',
];

/** Every relative `import … from` and `export … from` of a file, resolved. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s+'(\.{1,2}\/[^']+)'/gms)].map(
    (match) => path.resolve(path.dirname(file), match[1] as string),
  );
}

it('has no import circle in the product, the local stand-ins, the beds, the bench or the tests', () => {
  const files = sourceFiles(folders);
  const graph = new Map(files.map((file) => [file, importsOf(file)]));
  const circles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const visit = (file: string, trail: string[]) => {
    if (state.get(file) === 'done' || !graph.has(file)) return;
    if (state.get(file) === 'open') {
      const circle = trail.slice(trail.indexOf(file)).concat(file);
      circles.push(circle.map((step) => path.relative(root, step)).join(' → '));
      return;
    }
    state.set(file, 'open');
    for (const next of graph.get(file) ?? []) visit(next, [...trail, file]);
    state.set(file, 'done');
  };
  for (const file of files) visit(file, []);
  expect(circles).toEqual([]);
});

it('has no circle between the shared folders of the functions (each concept leans on those below)', () => {
  const shared = path.join(root, 'functions/shared');
  const folderOf = (file: string) => path.relative(shared, file).split(path.sep)[0] as string;
  const edges = new Map<string, Set<string>>();
  for (const file of sourceFiles(['functions/shared'])) {
    for (const imported of importsOf(file)) {
      if (!imported.startsWith(shared)) continue;
      const [from, to] = [folderOf(file), folderOf(imported)];
      if (from !== to) edges.set(from, (edges.get(from) ?? new Set()).add(to));
    }
  }
  const circles: string[] = [];
  const reach = (from: string, trail: string[]) => {
    for (const to of edges.get(from) ?? []) {
      if (trail.includes(to)) circles.push([...trail.slice(trail.indexOf(to)), to].join(' → '));
      else reach(to, [...trail, to]);
    }
  };
  for (const folder of edges.keys()) reach(folder, [folder]);
  expect([...new Set(circles)]).toEqual([]);
});

it('keeps the test beds out of every folder a user runs: the product, npm start and the client', () => {
  const beds = path.join(root, 'beds');
  const leaning = sourceFiles(['functions', 'infra', 'local', 'clients/typescript/src'])
    .filter((file) => importsOf(file).some((imported) => imported.startsWith(beds)))
    .map((file) => path.relative(root, file));
  expect(leaning).toEqual([]);
});
