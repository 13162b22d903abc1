// Warm throughput in a fresh process spawned by bench/warm-path.ts: import a bundle (or nothing,
// for raw HTTP), warm it up, then invoke it back to back for a fixed time and report requests,
// wall time and CPU time over IPC. With "blocks=<milliseconds>" it warms up that long instead, then
// runs each `{ count }` asked over IPC and reports each block the same way, until killed. stdout
// (the handler's log lines) goes to /dev/null.
// argv: <bundle path | "raw-http"> <event JSON file> <milliseconds | "blocks=<ms>"> <store endpoint>
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { pathToFileURL } from 'node:url';

const [subject = '', eventPath = '', durationText = '1000', endpoint = ''] = process.argv.slice(2);
const event = JSON.parse(readFileSync(eventPath, 'utf8'));
// Each create gets a new id; other events (a GET, a DELETE, a change of the path's plant) are
// sent as they are.
const plant = event.httpMethod === 'POST' ? JSON.parse(event.body) : undefined;
const context = {
  awsRequestId: 'warm',
  functionName: 'bench',
  getRemainingTimeInMillis: () => 10_000,
};

/** One put as bare as it gets: the same JSON body DynamoDB would get, over a kept-alive socket. */
function createRawPut() {
  const agent = new Agent({ keepAlive: true });
  const url = new URL(endpoint);
  return () =>
    new Promise((resolve, reject) => {
      const body = JSON.stringify({
        TableName: 'plants',
        Item: { id: { N: String(id) }, name: { S: plant.name }, tag: { S: plant.tag } },
        ConditionExpression: 'attribute_not_exists(id)',
      });
      const put = request(
        {
          agent,
          host: url.hostname,
          port: url.port,
          method: 'POST',
          path: '/',
          headers: {
            'content-type': 'application/x-amz-json-1.0',
            'x-amz-target': 'DynamoDB_20120810.PutItem',
          },
        },
        (response) => {
          response.resume();
          response.on('end', () => resolve({ statusCode: response.statusCode }));
        },
      );
      put.on('error', reject);
      put.end(body);
    });
}

let invoke;
if (subject === 'raw-http') {
  invoke = createRawPut();
} else {
  const { handler } = await import(pathToFileURL(subject).href);
  invoke = () => handler(event, context);
}

let id = 0;
const invokeOnce = async () => {
  id += 1;
  // Small ids: the bare handler reads them as plain numbers, which must stay below 2^53.
  if (plant !== undefined) event.body = JSON.stringify({ ...plant, id });
  const result = await invoke();
  if (!(result.statusCode >= 200 && result.statusCode < 300)) {
    throw new Error(`answered ${result.statusCode}`);
  }
};

/** Invocations back to back while `more(requests, elapsed)` holds: requests, wall and CPU time. */
async function measure(more) {
  const cpuBefore = process.cpuUsage();
  const start = performance.now();
  let requests = 0;
  while (more(requests, performance.now() - start)) {
    await invokeOnce();
    requests += 1;
  }
  const elapsedMilliseconds = performance.now() - start;
  const cpu = process.cpuUsage(cpuBefore);
  return { requests, elapsedMilliseconds, cpuMicroseconds: cpu.user + cpu.system };
}

// Warm-up: let V8 optimise the hot path before anything is counted.
const blocks = durationText.startsWith('blocks=');
const warmUp = blocks ? Number(durationText.slice('blocks='.length)) : 500;
await measure((_, elapsed) => elapsed < warmUp);

if (blocks) {
  process.on('message', async ({ count }) => {
    process.send(await measure((requests) => requests < count));
  });
  process.send('ready');
} else {
  const duration = Number(durationText);
  process.send(await measure((_, elapsed) => elapsed < duration));
  process.disconnect();
}
