/**
 * A webhook endpoint whose host resolves to an address this machine cannot route to: the connect
 * fails at once, and `npm start` (whose deliveries run the deployed delivery handler) records a
 * failed attempt and keeps serving, rather than dying of an unhandled socket error. The run takes
 * place in a network namespace of its own (`unshare`: loopback only, so nothing can leave the
 * machine; `/etc/hosts` names the IPv6-only host).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from '@jest/globals';

const script = new URL('unroutable-endpoint.script.ts', import.meta.url).pathname;
const folder = mkdtempSync(join(tmpdir(), 'plant-store-netns-'));

afterAll(() => {
  rmSync(folder, { recursive: true, force: true });
});

/** Fails with one line saying how to get what the test needs. */
function requireNetworkNamespaces(): void {
  const probe = spawnSync('unshare', ['-rnm', 'true'], { encoding: 'utf8' });
  if (probe.status !== 0) {
    throw new Error(
      `This test runs npm start in a network namespace of its own: \`unshare -rnm\` failed (${(probe.stderr || probe.error?.message || '').trim()}); it needs util-linux and unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1).`,
    );
  }
}

it('records a failed attempt and keeps serving when an endpoint host is unroutable', () => {
  requireNetworkNamespaces();
  const hosts = join(folder, 'hosts');
  writeFileSync(
    hosts,
    '127.0.0.1 localhost\n::1 localhost ip6-localhost\n2606:4700:4700::1111 ipv6-only.example.com\n',
  );
  const output = execFileSync(
    'unshare',
    [
      '-rnm',
      'sh',
      '-c',
      'ip link set lo up && mount --bind "$1" /etc/hosts && exec "$2" "$3"',
      'netns',
      hosts,
      process.execPath,
      script,
    ],
    { encoding: 'utf8', timeout: 120_000 },
  );
  const result = JSON.parse(output.trim().split('\n').at(-1) ?? '{}');
  expect(result).toMatchObject({
    registered: 201,
    created: 200,
    attempts: [
      expect.objectContaining({ outcome: 'failed', failure: 'request failed: ENETUNREACH' }),
    ],
    stillServing: 200,
    exitCode: 0,
    crashed: false,
  });
}, 150_000);
