/**
 * Per-function sizing: the ONE place to change memory and timeouts (the benchmark tunes the
 * memory here). Entry paths are relative to the repository root.
 *
 * Plain data (no aws-cdk-lib) so that the benchmark can import it.
 */
import { type RouteFunctionName, routeFunctionFolder } from '../functions/shared/http/routes.ts';

/** What the stack needs to know about one function. */
export interface FunctionSettings {
  /** Handler module, relative to the repository root; it exports `handler`. */
  readonly entry: string;
  /**
   * Lambda memory in MB. CPU scales with it (1769 MB = one vCPU), so it sets cold-start time
   * and JSON/crypto speed too. 128 MB makes a bundled-SDK cold start several times slower.
   */
  readonly memorySizeMb: number;
  readonly timeoutSeconds: number;
  /**
   * The DynamoDB actions the function may call on the plants table, and nothing else: a reader
   * cannot write or delete. (Every action a function's code sends must be here: a test reads
   * each bundle's commands.)
   */
  readonly tableActions?: readonly string[];
  /**
   * Whether the function reads stored items and skips (logging) those that are not plants: its
   * log group then feeds the `ItemsNotPlants` metric.
   */
  readonly skipsItemsNotPlants?: boolean;
  /** What it may do with the webhook endpoints: their table's actions, and the key's. */
  readonly endpointAccess?: {
    /** On the endpoints table. */
    readonly tableActions?: readonly string[];
    /** On the webhook log. */
    readonly logActions?: readonly string[];
    /** On the KMS key that seals the secrets: sealing (`kms:Encrypt`) or opening (`kms:Decrypt`). */
    readonly keyActions?: readonly ('kms:Encrypt' | 'kms:Decrypt')[];
    /** Whether it queues deliveries (a test event, a recover). */
    readonly sendsDeliveries?: boolean;
  };
}

/** A route function's Lambda entry, in the folder the route table names. */
function routeFunctionEntry(name: RouteFunctionName): string {
  return `${routeFunctionFolder(name)}/handler.ts`;
}

/**
 * The API functions share their shape of work (middy, one DynamoDB call through the same client,
 * a line of log), so the same sizing holds for each: see `createPlant` below, and the cold
 * starts `npm run bench` measures for every bundle.
 */
const apiFunctionMemorySizeMb = 1024;
/**
 * The DynamoDB client gives up after ~3 s by design (then 503/50300); 10 s leaves room for a
 * cold start and its retries while staying well under API Gateway's 29 s.
 */
const apiFunctionTimeoutSeconds = 10;

/** An endpoint function: sized as the plants' (the same shape of work), its access as given. */
function endpointFunction(
  name: RouteFunctionName,
  endpointAccess: NonNullable<FunctionSettings['endpointAccess']>,
): FunctionSettings {
  return {
    entry: routeFunctionEntry(name),
    memorySizeMb: apiFunctionMemorySizeMb,
    timeoutSeconds: apiFunctionTimeoutSeconds,
    endpointAccess,
  };
}

/**
 * What the fan-out and the replay do with the endpoints: read who hears (the count of changes,
 * then the list, in the webhook log), keep the events.
 */
const fanoutEndpointAccess = {
  logActions: ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:BatchWriteItem'],
} as const;

export const functionSettings = {
  createPlant: {
    entry: routeFunctionEntry('createPlant'),
    // Why 1024 MB: docs/decisions/memory.md.
    memorySizeMb: apiFunctionMemorySizeMb,
    timeoutSeconds: apiFunctionTimeoutSeconds,
    // A create is one conditional put; when the condition fails it returns the old item
    // (`ReturnValuesOnConditionCheckFailure`), which reads it: GetItem makes sure that read is
    // allowed, so an identical retry is answered 200 and a conflict 40009, not an access error.
    tableActions: ['dynamodb:PutItem', 'dynamodb:GetItem'],
  },
  listPlants: {
    entry: routeFunctionEntry('listPlants'),
    // Same cold start as create-plant within a millisecond or two (`npm run bench`); a page of
    // 100 plants adds ~1 ms of CPU for the JSON, so the same size keeps both short.
    memorySizeMb: apiFunctionMemorySizeMb,
    timeoutSeconds: apiFunctionTimeoutSeconds,
    tableActions: ['dynamodb:Scan'],
    skipsItemsNotPlants: true,
  },
  getPlant: {
    entry: routeFunctionEntry('getPlant'),
    memorySizeMb: apiFunctionMemorySizeMb,
    timeoutSeconds: apiFunctionTimeoutSeconds,
    tableActions: ['dynamodb:GetItem'],
    skipsItemsNotPlants: true,
  },
  updatePlant: {
    entry: routeFunctionEntry('updatePlant'),
    memorySizeMb: apiFunctionMemorySizeMb,
    timeoutSeconds: apiFunctionTimeoutSeconds,
    // A change is one conditional UpdateItem; a list of ETags, an If-None-Match or a patch that
    // names nothing reads the plant first (GetItem).
    tableActions: ['dynamodb:UpdateItem', 'dynamodb:GetItem'],
    skipsItemsNotPlants: true,
  },
  deletePlant: {
    entry: routeFunctionEntry('deletePlant'),
    memorySizeMb: apiFunctionMemorySizeMb,
    timeoutSeconds: apiFunctionTimeoutSeconds,
    // A delete with If-Match or If-None-Match reads the plant first (GetItem), then is
    // conditioned on the version it read.
    tableActions: ['dynamodb:DeleteItem', 'dynamodb:GetItem'],
    skipsItemsNotPlants: true,
  },
  // The webhook endpoint functions: each reaches the endpoint stores as its work needs, and no
  // plant; only those that show or sign with a secret may open one.
  createWebhookEndpoint: endpointFunction('createWebhookEndpoint', {
    // The endpoint's put and its owner's count (one transaction), then the fan-out's list.
    tableActions: ['dynamodb:PutItem'],
    logActions: ['dynamodb:UpdateItem'],
    keyActions: ['kms:Encrypt'],
  }),
  listWebhookEndpoints: endpointFunction('listWebhookEndpoints', {
    tableActions: ['dynamodb:Query'],
  }),
  getWebhookEndpoint: endpointFunction('getWebhookEndpoint', {
    tableActions: ['dynamodb:GetItem'],
  }),
  updateWebhookEndpoint: endpointFunction('updateWebhookEndpoint', {
    // Its own attributes, conditioned on the version read; then the fan-out's list.
    tableActions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
    logActions: ['dynamodb:UpdateItem'],
  }),
  deleteWebhookEndpoint: endpointFunction('deleteWebhookEndpoint', {
    // Read (its preconditions), deleted at that version with its owner's count (one
    // transaction), then withdrawn from the fan-out's list.
    tableActions: ['dynamodb:GetItem', 'dynamodb:DeleteItem'],
    logActions: ['dynamodb:UpdateItem'],
  }),
  getWebhookEndpointSecret: endpointFunction('getWebhookEndpointSecret', {
    tableActions: ['dynamodb:GetItem'],
    keyActions: ['kms:Decrypt'],
  }),
  rotateWebhookEndpointSecret: endpointFunction('rotateWebhookEndpointSecret', {
    // Seals the new secret and keeps the old one sealed as it is: it never opens one.
    tableActions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
    keyActions: ['kms:Encrypt'],
  }),
  testWebhookEndpoint: endpointFunction('testWebhookEndpoint', {
    tableActions: ['dynamodb:GetItem'],
    // Its call limit.
    logActions: ['dynamodb:UpdateItem'],
    sendsDeliveries: true,
  }),
  listWebhookEndpointAttempts: endpointFunction('listWebhookEndpointAttempts', {
    tableActions: ['dynamodb:GetItem'],
    logActions: ['dynamodb:Query'],
  }),
  recoverWebhookEndpoint: {
    ...endpointFunction('recoverWebhookEndpoint', {
      tableActions: ['dynamodb:GetItem'],
      // The events, where each stands, the claims of those it queues, its call limit.
      logActions: ['dynamodb:Query', 'dynamodb:BatchGetItem', 'dynamodb:UpdateItem'],
      sendsDeliveries: true,
    }),
    // Several store calls in a row, its claims and their release retried while the store is
    // unavailable: through a store pause that can pass 10 s, and a function out of time answers
    // 500. 25 s lets it answer its own 503, still inside API Gateway's 29 s.
    timeoutSeconds: 25,
  },
  webhookFanout: {
    entry: 'functions/webhook-fanout/handler.ts',
    // Turns stream records into queue messages: no user waits on it and its work is a few SQS
    // calls, so a small size; a cold start only delays deliveries by a fraction of a second.
    memorySizeMb: 512,
    timeoutSeconds: 30,
    skipsItemsNotPlants: true,
    // The enabled endpoints (their index), and every event kept for their recover.
    endpointAccess: fanoutEndpointAccess,
  },
  deliverWebhook: {
    entry: 'functions/deliver-webhook/handler.ts',
    // Mostly waits on subscribers (up to 10 s each, a batch's deliveries side by side); signing
    // is one HMAC per delivery. 512 MB keeps the cold start short without paying for idle CPU.
    memorySizeMb: 512,
    // A batch's deliveries run side by side, each at most 10 s, plus reading a secret.
    timeoutSeconds: 30,
    // Each endpoint as it is when sent to, its health; each attempt logged; its secret opened.
    endpointAccess: {
      tableActions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
      // Each attempt logged; the event's delivery claimed (a refused claim returns the item,
      // which GetItem allows) and settled; the fan-out's list when it disables an endpoint.
      logActions: [
        'dynamodb:PutItem',
        'dynamodb:BatchWriteItem',
        'dynamodb:UpdateItem',
        'dynamodb:GetItem',
      ],
      keyActions: ['kms:Decrypt'],
    },
  },
  replayStreamFailures: {
    entry: 'functions/replay-stream-failures/handler.ts',
    // Run every 5 minutes by its schedule (and by hand): it reads kept batches from S3 and sends
    // SQS batches. Under the schedule's period, so that two runs do not replay one batch side by
    // side; a run that runs out leaves the rest to the next.
    memorySizeMb: 512,
    timeoutSeconds: 240,
    skipsItemsNotPlants: true,
    endpointAccess: fanoutEndpointAccess,
  },
  authorizer: {
    entry: 'functions/authorizer/handler.ts',
    // A full vCPU: its cold start delays the request it authorizes (docs/decisions/memory.md).
    memorySizeMb: 1769,
    // A JWKS fetch (the only network call) plus a signature check; a hung fetch must fail fast.
    timeoutSeconds: 5,
  },
} as const satisfies Record<
  RouteFunctionName | 'authorizer' | 'webhookFanout' | 'deliverWebhook' | 'replayStreamFailures',
  FunctionSettings
>;
