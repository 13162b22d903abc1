/**
 * The API reference page's HTML and `npm run docs`: a `--server` URL can only be a plain http(s)
 * URL, and nothing in the page's configuration can end its inline script.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { docsPageHtml, plainServerUrl } from '../../local/docs-page.ts';

const repositoryRoot = new URL('../..', import.meta.url).pathname;

/** `npm run docs -- <folder> --server <url>`, as its script runs it. */
function runDocs(server: string) {
  const folder = mkdtempSync(join(tmpdir(), 'plant-store-docs-'));
  try {
    const run = spawnSync(
      process.execPath,
      [join(repositoryRoot, 'local/docs.ts'), folder, '--server', server],
      { encoding: 'utf8' },
    );
    let page: string | undefined;
    try {
      page = readFileSync(join(folder, 'index.html'), 'utf8');
    } catch {
      page = undefined;
    }
    return { status: run.status, stderr: run.stderr, page };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

describe('npm run docs --server', () => {
  it('writes a stage URL into the page for "try it"', () => {
    const { status, page } = runDocs('https://abc123.execute-api.eu-west-1.amazonaws.com/prod/');
    expect(status).toBe(0);
    expect(page).toContain(
      '"servers":[{"url":"https://abc123.execute-api.eu-west-1.amazonaws.com/prod"',
    );
  });

  it('writes markup in a URL\u2019s path percent-encoded, never ending the page\u2019s script', () => {
    const { status, page } = runDocs('https://api.example.com/</script><script>alert(1)</script>');
    expect(status).toBe(0);
    expect(page?.match(/<script>/g)).toHaveLength(1);
    expect(page).toContain(
      'https://api.example.com/%3C/script%3E%3Cscript%3Ealert(1)%3C/script%3E',
    );
  });

  it.each([
    ['a javascript: URL', 'javascript:alert(1)'],
    ['a data: URL', 'data:text/html,<script>alert(1)</script>'],
    ['user info', 'https://user:secret@api.example.com/prod'],
    ['a query', 'https://api.example.com/prod?x=</script>'],
    ['a fragment', 'https://api.example.com/prod#</script>'],
    ['not a URL', 'api.example.com/prod'],
  ])('refuses %s with one line and exit code 2, writing no page', (_, server) => {
    const { status, stderr, page } = runDocs(server);
    expect(status).toBe(2);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(/^--server /);
    expect(page).toBeUndefined();
  });
});

describe('the page', () => {
  /** The inline script: everything between the last <script> and its </script>. */
  const inlineScriptsOf = (html: string) => html.match(/<script>[\s\S]*?<\/script>/g) ?? [];

  it('keeps a URL that the parser would accept with markup in its path inside its script', () => {
    // The URL parser percent-encodes < and > in a path; a hand-made server value is escaped too.
    const html = docsPageHtml('openapi.yaml', 'scalar.js', 'https://x.example/</script><!--');
    const scripts = inlineScriptsOf(html);
    expect(scripts).toHaveLength(1);
    expect(scripts[0]).not.toMatch(/<\/script>.*<\/script>|<!--/s);
    expect(html).toContain('\\u003c/script\\u003e\\u003c!--');
  });

  it('spells an accepted URL as the URL parser does: the path percent-encoded', () => {
    expect(plainServerUrl('https://api.example.com/pr<o>d')).toBe(
      'https://api.example.com/pr%3Co%3Ed',
    );
  });

  it('turns off every hosted feature of the renderer in its configuration', () => {
    const [script] = inlineScriptsOf(docsPageHtml('openapi.yaml', 'scalar.js'));
    const configuration = JSON.parse(
      (/const configuration = (\{.*\});/.exec(script ?? '') as RegExpExecArray)[1] as string,
    );
    expect(configuration).toMatchObject({
      telemetry: false,
      withDefaultFonts: false,
      agent: { disabled: true },
      mcp: { disabled: true },
      showToolbar: 'never',
      showDeveloperTools: 'never',
      hideClientButton: true,
      isEditable: false,
    });
  });
});
