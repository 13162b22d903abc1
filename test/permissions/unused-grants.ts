/**
 * The permissions tier's two lists kept by hand, each entry with its reason: the actions AWS asks
 * no permission for, and each granted action that no recorded call uses (`<principal> <action>`,
 * the principal a function's logical id without its hash, a role's name, or `*` for every one).
 * What Lambda itself does with a function's role (its logs, traces and event source mappings)
 * happens inside the emulator, where no call can be recorded.
 */

/** Calls IAM does not authorize. */
export const needsNoPermission: readonly string[] = [
  // "No permissions are required to perform this operation" (STS API Reference, GetCallerIdentity).
  'sts:GetCallerIdentity',
];

const lambdaLogs =
  'Lambda writes the function’s log group with its role (Lambda: "Working with Amazon CloudWatch Logs", execution role permissions).';
const lambdaTraces =
  'Active tracing: Lambda’s X-Ray daemon sends the traces with the function’s role (Lambda: "Visualize Lambda function invocations using AWS X-Ray").';
const streamMapping =
  'The event source mapping reads the table’s stream with the function’s role (Lambda: "Process DynamoDB records with Lambda", execution role permissions).';
const streamFailures =
  'The stream mapping’s on-failure destination: Lambda writes the failed batch to the bucket with the function’s role (Lambda: "Retaining discarded records").';
const queueMapping =
  'The SQS event source mapping polls, deletes and extends messages with the function’s role (Lambda: "Using Lambda with Amazon SQS", execution role permissions).';

/** Grants no recorded call uses, and why each stays. */
export const justifiedUnusedGrants: Readonly<Record<string, string>> = {
  '* logs:CreateLogStream': lambdaLogs,
  '* logs:PutLogEvents': lambdaLogs,
  '* xray:PutTraceSegments': lambdaTraces,
  '* xray:PutTelemetryRecords': lambdaTraces,
  '* xray:PutSpans':
    'Spans go to X-Ray’s OTLP endpoint only for a sampled trace on a stage that sends them (spans.ts): a run uses it where its functions’ traces were sampled; test/functions/shared/platform/spans.test.ts signs an export for xray.',
  '* xray:PutSpansForIndexing':
    'Granted beside xray:PutSpans, as X-Ray’s write policy grants both: the OTLP endpoint indexes a share of the spans it takes (Transaction Search) as the sender; no call names it.',
  'WebhookFanout dynamodb:DescribeStream': streamMapping,
  'WebhookFanout dynamodb:GetRecords': streamMapping,
  'WebhookFanout dynamodb:GetShardIterator': streamMapping,
  'WebhookFanout dynamodb:ListStreams': streamMapping,
  'WebhookFanout s3:PutObject': streamFailures,
  'WebhookFanout s3:ListBucket': streamFailures,
  'DeliverWebhook sqs:ReceiveMessage': queueMapping,
  'DeliverWebhook sqs:DeleteMessage': queueMapping,
  'DeliverWebhook sqs:ChangeMessageVisibility': queueMapping,
  'DeliverWebhook sqs:GetQueueAttributes': queueMapping,
  'DeliverWebhook sqs:GetQueueUrl':
    'Granted with the mapping’s own by CDK’s SqsEventSource (grantConsumeMessages), which has no way to leave it out; it reads the queue’s URL only.',
  // Paths the runs on MiniStack do not take, each driven in-process by the test named.
  'CreatePlant dynamodb:GetItem':
    'A refused conditional put returns the stored item (ReturnValuesOnConditionCheckFailure), read with this grant (create-plant.ts); no emulator here can show whether AWS asks for it.',
  'UpdatePlant dynamodb:GetItem':
    'A change that writes nothing, names several ETags or has If-None-Match reads the plant first (update-plant.ts); test/api/conditional-requests.integration.test.ts takes those paths.',
  'DeliverWebhook sqs:SendMessage':
    'Retries and dead letters, sent when a receiver fails: the runs on MiniStack deliver at the first attempt; test/webhooks/dead-subscriber.integration.test.ts sends both on moto.',
  'ReplayStreamFailures dynamodb:BatchWriteItem':
    'The event log keeps several events of a batch in one BatchWriteItem (webhook-log.ts); the replay on MiniStack keeps one; test/webhooks/deployed-webhooks.integration.test.ts keeps several.',
  'RecoverWebhookEndpoint sqs:SendMessage':
    'Queues only the events an endpoint missed: the contract suite’s recover finds some on one run and none on another (a busy machine delivers them first); test/api/recover-faults.integration.test.ts queues them.',
  'ReplayStreamFailures sqs:SendMessage':
    'Queues a kept event for its subscribers: the replay on MiniStack has none to queue for (dev has no stage subscriber); test/webhooks/deployed-webhooks.integration.test.ts queues on moto.',
  'WebhookFanout dynamodb:BatchWriteItem':
    'The event log keeps several events of a stream batch in one BatchWriteItem (webhook-log.ts); on MiniStack each batch may hold one; the fault tier’s batches hold many.',
  'RotateWebhookEndpointSecret kms:GenerateDataKey':
    'Rotate makes the stage’s data key when it is the first to seal a secret (a stage whose secrets all predate the data key); on MiniStack a create always seals first; test/functions/webhook-endpoints/secret-box.integration.test.ts makes it with the box rotate seals with.',
  'ReplayStreamFailures s3:PutObjectTagging':
    'A replay that fails part-way keeps its progress in the batch’s tags: test/webhooks/deployed-webhooks.integration.test.ts, on moto.',
  'RotateWebhookEndpointSecret dynamodb:DeleteItem':
    'Lets an Idempotency-Key go after a failed rotation (idempotency-keys.ts): the contract suite’s keyed failure is a recover’s; test/api/idempotency-keys.integration.test.ts lets keys go.',
  'TestWebhookEndpoint dynamodb:DeleteItem':
    'Lets an Idempotency-Key go after a failed test (idempotency-keys.ts): the contract suite’s keyed failure is a recover’s; test/api/idempotency-keys.integration.test.ts lets keys go.',
  'ReplayStreamFailures s3:PutObject':
    'A record failing 7 replays in a row is set aside under set-aside/: test/webhooks/deployed-webhooks.integration.test.ts, on moto.',
};
