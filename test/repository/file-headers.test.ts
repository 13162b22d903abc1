/**
 * A file's header says what the file is for in a few lines and points to the record of why:
 * at most ten lines, so that the reasons live in one place (docs/decisions, CONTRIBUTING).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from '@jest/globals';
import { root, sourceFiles } from './source-files.ts';

const folders = ['functions', 'infra', 'local', 'beds', 'bench', 'clients', 'lambda-image', 'test'];
const longest = 10;

/** The lines of a file's opening doc comment, 0 when it opens with none. */
function headerLines(text: string): number {
  const start = text.replace(/^#!.*\n/, '').trimStart();
  if (!start.startsWith('/**')) return 0;
  return start.slice(0, start.indexOf('*/')).split('\n').length;
}

it(`keeps every file header to ${longest} lines`, () => {
  const files = sourceFiles(folders);
  expect(files.length).toBeGreaterThan(100);
  const long = files
    .map((file) => ({
      file: path.relative(root, file),
      lines: headerLines(readFileSync(file, 'utf8')),
    }))
    .filter(({ lines }) => lines > longest);
  expect(long).toEqual([]);
});

it('counts a header as its opening doc comment, a shebang aside', () => {
  expect(headerLines('#!/usr/bin/env node\n/**\n * One.\n * Two.\n */\nconst x = 1;')).toBe(4);
  expect(headerLines('// A line comment.\nconst x = 1;')).toBe(0);
});
