/**
 * The trace viewer of `npm start -- --traces`: Jaeger v2 (`.ci/jaeger` builds it, pinned), in
 * memory, on free ports of 127.0.0.1 only, under the guard every emulator here runs under. The
 * functions send it their spans over OTLP/HTTP; its query API, and the project's page drawing a
 * trace from it (`local/trace-viewer/index.html`), answer at `url`.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort, startGuardedServer } from './guarded-server.ts';
import { ensurePrivateDirectory } from './private-directory.ts';

const repositoryRoot = path.resolve(import.meta.dirname, '..');
const viewerPage = path.join(repositoryRoot, 'local/trace-viewer');

export interface TraceViewer {
  /** The viewer's page (a trace at `/trace/<trace id>`) and query API (`/api/traces/<id>`). */
  readonly url: string;
  /** What `OTEL_EXPORTER_OTLP_ENDPOINT` is set to. */
  readonly otlpEndpoint: string;
  stop(): Promise<void>;
}

/** Builds Jaeger when it is not built yet (once, minutes), then starts it. */
export async function startTraceViewer(dataDirectory: string): Promise<TraceViewer> {
  await promisify(execFile)('bash', [path.join(repositoryRoot, '.ci/jaeger')], {
    maxBuffer: 16 * 1024 * 1024,
  }).catch((error: { stderr?: string }) => {
    throw new Error(`could not build the trace viewer: ${error.stderr?.trim() || String(error)}`);
  });
  const [query, queryGrpc, otlp] = [await freePort(), await freePort(), await freePort()];
  const directory = path.join(dataDirectory, 'jaeger');
  ensurePrivateDirectory(directory);
  const config = path.join(directory, 'config.yaml');
  writeFileSync(config, configuration({ query, queryGrpc, otlp }), { mode: 0o600 });
  const url = `http://127.0.0.1:${query}`;
  const server = await startGuardedServer({
    name: 'jaeger',
    command: [path.join(repositoryRoot, '.data/go/bin/jaeger'), '--config', `file:${config}`],
    healthUrl: `${url}/api/services`,
    readyTimeoutMilliseconds: 30_000,
    pollMilliseconds: 100,
    keepOutput: true,
    // Ctrl-C stops npm start, which stops the viewer last, once its functions have sent spans;
    // its traces are in memory, and its graceful stop takes 10 s once it has answered a query.
    ownGroup: true,
    stopSignal: 'KILL',
  });
  return { url, otlpEndpoint: `http://127.0.0.1:${otlp}`, stop: () => server.stop() };
}

/** In memory; OTLP over HTTP in, the query API out; no other listener, no metrics port. */
function configuration(ports: { query: number; queryGrpc: number; otlp: number }): string {
  return `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_storage:
    backends:
      memory:
        memory:
          max_traces: 100000
  jaeger_query:
    storage:
      traces: memory
    # The project's page (local/trace-viewer): Jaeger's Go module carries no UI of its own.
    ui:
      assets_path: ${JSON.stringify(viewerPage)}
    http:
      endpoint: 127.0.0.1:${ports.query}
    grpc:
      endpoint: 127.0.0.1:${ports.queryGrpc}
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:${ports.otlp}
        # An idle kept-alive connection closes soon: a stop need not wait for it.
        idle_timeout: 1s
processors:
  batch:
    timeout: 100ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memory
`;
}
