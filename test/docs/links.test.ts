/**
 * The README, CONTRIBUTING.md and every page of `docs/` link to files and headings that exist:
 * moving a section must not leave a link behind.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { repositoryRoot } from '../../infra/plant-store-function.ts';

function markdownFiles(directory: string): string[] {
  return readdirSync(path.join(repositoryRoot, directory), { withFileTypes: true }).flatMap(
    (entry) => {
      const relative = path.join(directory, entry.name);
      if (entry.isDirectory()) return markdownFiles(relative);
      return entry.name.endsWith('.md') ? [relative] : [];
    },
  );
}

const pages = ['README.md', 'CONTRIBUTING.md', ...markdownFiles('docs')];

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{Letter}\p{Number} _-]/gu, '')
    .replace(/ /g, '-');
}

function anchorsOf(file: string): Set<string> {
  const text = readFileSync(path.join(repositoryRoot, file), 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set(
    [...text.matchAll(/^#{1,6} (.+)$/gm)].map((match) => anchorOf(match[1] as string)),
  );
}

describe.each(pages)('%s', (page) => {
  const text = readFileSync(path.join(repositoryRoot, page), 'utf8').replace(/```[\s\S]*?```/g, '');
  const links = [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1] as string)
    .filter((target) => !/^[a-z]+:/.test(target));

  it('links only to files and headings that exist', () => {
    const broken = links.filter((target) => {
      const [file = '', anchor] = target.split('#');
      const resolved = file === '' ? page : path.join(path.dirname(page), file);
      if (!existsSync(path.join(repositoryRoot, resolved))) return true;
      return anchor !== undefined && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor);
    });
    expect(broken).toEqual([]);
  });
});

it('has every page of docs/ reachable from the README', () => {
  const reachable = new Set<string>();
  const visit = (page: string) => {
    if (reachable.has(page)) return;
    reachable.add(page);
    const text = readFileSync(path.join(repositoryRoot, page), 'utf8');
    for (const match of text.matchAll(/\]\(([^)#\s]+\.md)(#[^)]*)?\)/g)) {
      const target = path.join(path.dirname(page), match[1] as string);
      if (existsSync(path.join(repositoryRoot, target))) visit(target);
    }
  };
  visit('README.md');
  expect(pages.filter((page) => !reachable.has(page))).toEqual([]);
});
