/**
 * A recorder in front of an AWS emulator, for the permissions tier (`test/permissions/`): every
 * signed AWS call that passes is forwarded as it is and written down as the service, the IAM
 * action, the resource ARNs and who made it. Nothing is kept by hand: a call is what the SDK sent.
 */
import { appendFileSync } from 'node:fs';
import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
} from 'node:http';
import type { AddressInfo } from 'node:net';

/** One AWS call, as IAM sees it. */
export interface RecordedCall {
  /** The caller: a principal this recorder was told of, `function:<logical id>`, or `unknown:…`. */
  readonly principal: string;
  /** The IAM service prefix (`sqs`, `cloudformation`…). */
  readonly service: string;
  /** `<service>:<action>`, as IAM names it. */
  readonly action: string;
  /** The resources the call names; `*` where the action takes none. */
  readonly resources: readonly string[];
  /** What the emulator answered. */
  readonly status: number;
  /** The label of the run that recorded it (the tier and its step). */
  readonly run: string;
  /** The condition keys AWS takes from the request itself (`kms:EncryptionContext:…`…). */
  readonly context: Readonly<Record<string, string | string[]>>;
}

export interface CallRecorder {
  readonly url: string;
  /** Credentials that the recorder attributes to `principal` (a role ARN, or a name). */
  credentialsOf(principal: string): Record<string, string>;
  /** Labels the calls recorded from now on (the tier's step). */
  label(run: string): void;
  stop(): Promise<void>;
}

/** A signing name whose IAM prefix differs. */
const iamPrefixOf: Readonly<Record<string, string>> = { monitoring: 'cloudwatch', email: 'ses' };

interface Request {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

/** The IAM action and resources of one call, or undefined for one that is not an AWS API call. */
export function describeCall(
  request: Request,
  region: string,
  account: string,
): { service: string; action: string; resources: string[] } | undefined {
  const credential =
    /Credential=([^/]+)\/\d+\/([^/]+)\/([^/]+)\//.exec(
      String(request.headers.authorization ?? ''),
    ) ?? /^([^/]+)\/\d+\/([^/]+)\/([^/]+)\//.exec(request.query.get('X-Amz-Credential') ?? '');
  if (credential === null) return undefined;
  const signingName = credential[3] as string;
  const service = iamPrefixOf[signingName] ?? signingName;
  const target = String(request.headers['x-amz-target'] ?? '');
  const form = String(request.headers['content-type'] ?? '').startsWith(
    'application/x-www-form-urlencoded',
  )
    ? new URLSearchParams(request.body)
    : undefined;
  const json = target !== '' ? parseJson(request.body) : {};
  const arn = (kind: string, name: string) =>
    `arn:aws:${service}:${region}:${account}:${kind}${name}`;
  if (service === 's3') return { service, ...s3Call(request) };
  // X-Ray's OTLP endpoint: a POST of spans is authorized as `xray:PutSpans` (CloudWatch, "OTLP
  // Endpoint"), which takes no resource.
  if (service === 'xray' && request.path === '/v1/traces') {
    return { service, action: 'xray:PutSpans', resources: ['*'] };
  }
  if (service === 'apigateway') {
    return {
      service,
      action: `apigateway:${request.method}`,
      resources: [`arn:aws:apigateway:${region}::${decodeURI(request.path).replace(/\/+$/, '')}`],
    };
  }
  const action = target !== '' ? target.split('.').at(-1) : form?.get('Action');
  if (action === undefined || action === null) {
    return { service, action: `${service}:${request.method} ${request.path}`, resources: [] };
  }
  const parameter = (name: string) => (form?.get(name) ?? json[name]) as string | undefined;
  const resources = (): string[] => {
    switch (service) {
      case 'dynamodb': {
        const table = parameter('TableName');
        const index = parameter('IndexName');
        const tables = [
          ...(table === undefined ? [] : [index === undefined ? table : `${table}/index/${index}`]),
          ...Object.keys((json.RequestItems as object | undefined) ?? {}),
        ];
        return tables.map((name) => arn('table/', name));
      }
      case 'sqs': {
        const url = parameter('QueueUrl');
        return url === undefined ? ['*'] : [arn('', url.split('/').at(-1) ?? '')];
      }
      case 'kms': {
        const key = parameter('KeyId');
        if (key === undefined) return ['*'];
        return [key.startsWith('arn:') ? key : arn(key.startsWith('alias/') ? '' : 'key/', key)];
      }
      case 'secretsmanager': {
        const secret = parameter('SecretId');
        if (secret === undefined) return ['*'];
        return [secret.startsWith('arn:') ? secret : arn('secret:', `${secret}-??????`)];
      }
      case 'cloudformation': {
        const stack = parameter('StackName');
        if (stack === undefined) return ['*'];
        return [stack.startsWith('arn:') ? stack : arn('stack/', `${stack}/*`)];
      }
      case 'cognito-idp':
        return [arn('userpool/', parameter('UserPoolId') ?? '*')];
      case 'sts': {
        const role = parameter('RoleArn');
        return role === undefined ? ['*'] : [role];
      }
      case 'ssm': {
        const name = parameter('Name');
        return name === undefined
          ? ['*']
          : [arn('parameter', name.startsWith('/') ? name : `/${name}`)];
      }
      default:
        return ['*'];
    }
  };
  return { service, action: `${service}:${action}`, resources: resources() };
}

/**
 * The condition keys a service sets from a JSON request's members, as its page in the Service
 * Authorization Reference names them: KMS's encryption context, DynamoDB's `ReturnValues`.
 */
function requestConditionKeys(service: string, body: string): Record<string, string | string[]> {
  const json = parseJson(body);
  if (service === 'kms' && typeof json.EncryptionContext === 'object') {
    const encryptionContext = json.EncryptionContext as Record<string, string>;
    return {
      'kms:EncryptionContextKeys': Object.keys(encryptionContext),
      ...Object.fromEntries(
        Object.entries(encryptionContext).map(([key, value]) => [
          `kms:EncryptionContext:${key}`,
          value,
        ]),
      ),
    };
  }
  if (service === 'dynamodb' && typeof json.ReturnValues === 'string') {
    return { 'dynamodb:ReturnValues': json.ReturnValues };
  }
  return {};
}

/**
 * The actions IAM authorizes for a call: DynamoDB's transactions item by item, as the item's own
 * action ("Using IAM with DynamoDB transactions"), SQS's batches as their single action; every
 * other call as itself.
 */
function asAuthorized(
  call: { service: string; action: string; resources: string[] },
  body: string,
  where: { readonly region: string; readonly account: string },
): { service: string; action: string; resources: string[] }[] {
  // SQS's batch calls are authorized as their single actions ("Amazon SQS API permissions").
  const single = /^sqs:(SendMessage|DeleteMessage|ChangeMessageVisibility)Batch$/.exec(call.action);
  if (single !== null) return [{ ...call, action: `sqs:${single[1]}` }];
  if (
    call.action !== 'dynamodb:TransactWriteItems' &&
    call.action !== 'dynamodb:TransactGetItems'
  ) {
    return [call];
  }
  const items = (parseJson(body).TransactItems ?? []) as Record<string, { TableName: string }>[];
  const actions: Record<string, string> = {
    Put: 'PutItem',
    Update: 'UpdateItem',
    Delete: 'DeleteItem',
    ConditionCheck: 'ConditionCheckItem',
    Get: 'GetItem',
  };
  return items.flatMap((item) =>
    Object.entries(item).map(([kind, { TableName }]) => ({
      service: 'dynamodb',
      action: `dynamodb:${actions[kind] ?? kind}`,
      resources: [`arn:aws:dynamodb:${where.region}:${where.account}:table/${TableName}`],
    })),
  );
}

/**
 * S3's REST calls (path style), as IAM names them ("Actions, resources and condition keys for
 * Amazon S3"). A subresource or header that asks another permission than the plain call's (a
 * version, an ACL, a copy, tags on a put) is recorded as unreadable, so the tier stops on it
 * rather than judge it as the plain call.
 */
function s3Call(request: Request): { action: string; resources: string[] } {
  const [bucket = '', ...rest] = request.path.replace(/^\//, '').split('/');
  const key = decodeURIComponent(rest.join('/'));
  const bucketArn = `arn:aws:s3:::${bucket}`;
  // The SDK's own marker of the operation (`x-id`) and a presigned URL's parameters ask nothing.
  const query = [...request.query.keys()].filter(
    (name) => name !== 'x-id' && !name.startsWith('X-Amz-'),
  );
  const unread = (why: string) => ({
    action: `s3:${request.method} ${why}`,
    resources: [key === '' ? bucketArn : `${bucketArn}/${key}`],
  });
  if (bucket === '') return { action: 's3:ListAllMyBuckets', resources: ['*'] };
  if (key === '') {
    const listing = [
      'list-type',
      'prefix',
      'delimiter',
      'max-keys',
      'continuation-token',
      'start-after',
      'encoding-type',
      'fetch-owner',
    ];
    if (request.method === 'GET' && query.length === 1 && query[0] === 'location') {
      return { action: 's3:GetBucketLocation', resources: [bucketArn] };
    }
    if (request.method === 'POST' && query.length === 1 && query[0] === 'delete') {
      return { action: 's3:DeleteObject', resources: [`${bucketArn}/*`] };
    }
    if (
      (request.method === 'GET' || request.method === 'HEAD') &&
      query.every((name) => listing.includes(name))
    ) {
      return { action: 's3:ListBucket', resources: [bucketArn] };
    }
    return unread(`bucket ?${query.join('&')}`);
  }
  const object = [`${bucketArn}/${key}`];
  if (query.length === 1 && query[0] === 'tagging') {
    const tagging: Record<string, string> = {
      GET: 's3:GetObjectTagging',
      PUT: 's3:PutObjectTagging',
      DELETE: 's3:DeleteObjectTagging',
    };
    return tagging[request.method] === undefined
      ? unread('tagging')
      : { action: tagging[request.method] as string, resources: object };
  }
  const headers = Object.keys(request.headers);
  const asksMore = ['x-amz-copy-source', 'x-amz-tagging', 'x-amz-acl'].find((name) =>
    headers.includes(name),
  );
  if (query.length > 0 || asksMore !== undefined)
    return unread(`object ?${query.join('&')} ${asksMore ?? ''}`);
  const byMethod: Record<string, string> = {
    GET: 's3:GetObject',
    HEAD: 's3:GetObject',
    PUT: 's3:PutObject',
    DELETE: 's3:DeleteObject',
  };
  const action = byMethod[request.method];
  return action === undefined ? unread('object') : { action, resources: object };
}

function parseJson(body: string): Record<string, unknown> {
  try {
    return JSON.parse(body) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** The access key id a request was signed with. */
function accessKeyOf(request: Request): string | undefined {
  return (
    /Credential=([^/]+)\//.exec(String(request.headers.authorization ?? ''))?.[1] ??
    request.query.get('X-Amz-Credential')?.split('/')[0]
  );
}

/**
 * Starts the recorder on 127.0.0.1, forwarding to `upstream` and appending each call to `file`
 * (JSON lines). Credentials STS hands out are attributed to the role they assume; an SDK call
 * with `AWS_SDK_UA_APP_ID` set (the emulator's functions) to `function:<app id>`.
 */
export async function startCallRecorder(options: {
  readonly upstream: string;
  readonly file: string;
  readonly region: string;
  readonly account: string;
}): Promise<CallRecorder> {
  // The emulator's test key is the operator's: the person running the tests or the emulator.
  const principals = new Map<string, string>([['test', 'operator']]);
  let run = 'unlabelled';
  /** Writes down the call `request` made, as IAM sees it, and who made it. */
  const record = (request: Request, answer: { status: number; body: Buffer }) => {
    const call = describeCall(request, options.region, options.account);
    if (call === undefined) return;
    const key = accessKeyOf(request) ?? '';
    // A function's own name wins over its credentials (MiniStack's are the account's).
    const appId = /\bapp\/(PlantStore-[\w-]+\.\w+)/.exec(
      String(request.headers['user-agent'] ?? ''),
    )?.[1];
    const principal =
      appId === undefined ? (principals.get(key) ?? `unknown:${key}`) : `function:${appId}`;
    if (call.action === 'sts:AssumeRole' && answer.status === 200) {
      const assumed = /<AccessKeyId>([^<]+)<\/AccessKeyId>/.exec(answer.body.toString('utf8'));
      if (assumed?.[1] !== undefined && call.resources[0] !== undefined) {
        principals.set(assumed[1], call.resources[0]);
      }
    }
    const context = requestConditionKeys(call.service, request.body);
    for (const authorized of asAuthorized(call, request.body, options)) {
      const recorded: RecordedCall = {
        principal,
        ...authorized,
        status: answer.status,
        run,
        context,
      };
      appendFileSync(options.file, `${JSON.stringify(recorded)}\n`);
    }
  };
  const server: Server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const body = Buffer.concat(chunks);
      const url = new URL(incoming.url ?? '/', 'http://recorder');
      const request: Request = {
        method: incoming.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        headers: incoming.headers,
        body: body.toString('utf8'),
      };
      forward(options.upstream, incoming, body).then(
        (answer) => {
          try {
            record(request, answer);
          } catch (error) {
            // Never a call left out: one the recorder cannot read is recorded as such.
            appendFileSync(
              options.file,
              `${JSON.stringify({ principal: 'unknown', service: 'unknown', action: `unreadable ${request.method} ${request.path}: ${String(error)}`, resources: [], status: answer.status, run, context: {} })}\n`,
            );
          }
          outgoing.writeHead(answer.status, answer.headers);
          outgoing.end(answer.body);
        },
        (error: unknown) => {
          outgoing.writeHead(502, { 'content-type': 'text/plain' });
          outgoing.end(`The recorder could not reach the emulator: ${String(error)}`);
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    credentialsOf: (principal) => {
      // A key id per principal; the emulator takes any well-formed one.
      const key = `AKIA${Buffer.from(principal).toString('hex').slice(-16).toUpperCase()}${principals.size}`;
      principals.set(key, principal);
      return { AWS_ACCESS_KEY_ID: key, AWS_SECRET_ACCESS_KEY: 'recorded', AWS_SESSION_TOKEN: '' };
    },
    label: (next) => {
      run = next;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Sends the request on unchanged (its Host included: the emulator routes by it). */
function forward(
  upstream: string,
  incoming: IncomingMessage,
  body: Buffer,
): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
  const target = new URL(upstream);
  const { 'transfer-encoding': _chunked, ...headers } = incoming.headers;
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: incoming.method,
        path: incoming.url,
        headers: { ...headers, 'content-length': String(body.length) },
      },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          const {
            'transfer-encoding': _chunked,
            connection: _connection,
            ...headers
          } = answer.headers;
          resolve({ status: answer.statusCode ?? 502, headers, body: Buffer.concat(chunks) });
        });
        answer.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}
