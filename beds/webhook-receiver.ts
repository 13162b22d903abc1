/**
 * A real webhook receiver on 127.0.0.1, as a subscriber would run one: it verifies every
 * delivery with the Standard Webhooks reference library and records what it got. Its behaviour
 * can be switched to answer 500, to hang, or to refuse connections (stopped), and back.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export type ReceiverMode = 'ok' | 'fail' | 'hang';

export interface ReceivedDelivery {
  readonly webhookId: string;
  /** The body exactly as sent. */
  readonly body: string;
  readonly contentType: string | undefined;
  /** The `plant-version` header. */
  readonly plantVersion: string | undefined;
  /** Every header as received. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** Whether the signature verified with the subscriber's secret. */
  readonly verified: boolean;
  /** What the receiver answered. */
  readonly answered: ReceiverMode;
  readonly receivedAt: number;
}

export interface WebhookReceiver {
  readonly url: string;
  /** Every request received, in order (failed answers included). */
  readonly deliveries: ReceivedDelivery[];
  /** Deliveries answered 2xx, one per webhook id: what the subscriber has. */
  accepted(): Map<string, ReceivedDelivery>;
  setMode(mode: ReceiverMode): void;
  /** Verifies what comes next with this secret (an endpoint's, once it is created or rotated). */
  setSecret(secret: string): void;
  /** Stops listening (connections are refused) and closes open ones; `start` listens again. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Resolves when `count` distinct webhook ids were accepted, or rejects after `timeout` ms. */
  waitForAccepted(count: number, timeoutMilliseconds?: number): Promise<void>;
}

/**
 * Starts a receiver verifying with `secret`, on `port` (a free one by default) of `host`
 * (127.0.0.1; `sam local`'s containers need the Docker bridge's gateway).
 */
export async function startWebhookReceiver(
  secret: string,
  port = 0,
  host = '127.0.0.1',
): Promise<WebhookReceiver> {
  let verifier = new Webhook(secret);
  const deliveries: ReceivedDelivery[] = [];
  let mode: ReceiverMode = 'ok';
  const hanging = new Set<ServerResponse>();

  const handle = (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let verified = true;
      try {
        verifier.verify(body, request.headers as Record<string, string>);
      } catch {
        verified = false;
      }
      deliveries.push({
        webhookId: String(request.headers['webhook-id']),
        body,
        contentType: request.headers['content-type'],
        plantVersion: request.headers['plant-version'] as string | undefined,
        headers: request.headers,
        verified,
        answered: mode,
        receivedAt: Date.now(),
      });
      if (mode === 'hang') {
        hanging.add(response);
        return;
      }
      response.writeHead(mode === 'ok' ? 204 : 500).end();
    });
  };

  let server: Server = createServer(handle);
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        port = (server.address() as AddressInfo).port;
        resolve();
      });
    });
  await listen();

  const accepted = () => {
    const byId = new Map<string, ReceivedDelivery>();
    for (const delivery of deliveries) {
      if (delivery.answered === 'ok' && !byId.has(delivery.webhookId)) {
        byId.set(delivery.webhookId, delivery);
      }
    }
    return byId;
  };

  return {
    url: `http://${host}:${port}/webhooks`,
    deliveries,
    accepted,
    setMode: (next) => {
      mode = next;
    },
    setSecret: (next) => {
      verifier = new Webhook(next);
    },
    stop: () =>
      new Promise<void>((resolve) => {
        for (const response of hanging) response.destroy();
        hanging.clear();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
    start: async () => {
      server = createServer(handle);
      await listen();
    },
    // A wait, not a bound: deliveries on a busy machine take what they take.
    waitForAccepted: async (count, timeoutMilliseconds = 120_000) => {
      const deadline = Date.now() + timeoutMilliseconds;
      while (accepted().size < count) {
        if (Date.now() > deadline) {
          throw new Error(`${accepted().size} of ${count} webhooks accepted in time`);
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
  };
}
