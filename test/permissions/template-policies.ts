/**
 * The IAM policies of a template, as AWS evaluates them once deployed: each role's identity
 * policies and each resource's policy (queues, buckets, keys, roles' trust), with every intrinsic
 * function resolved to the physical names the deployment gave (`ListStackResources`).
 */
import { recordedAccount, recordedRegion } from './recordings.ts';

type Resource = { Type: string; Properties?: Record<string, unknown> };
export type Template = { Resources: Record<string, Resource> };
export type PolicyDocument = { Version?: string; Statement: Record<string, unknown>[] };

/** A principal's policies: `identity` by name, and its role ARN. */
export interface RolePolicies {
  readonly roleArn: string;
  readonly identity: { readonly name: string; readonly policy: PolicyDocument }[];
}

export interface StackPolicies {
  /** The roles by logical id. */
  readonly roles: ReadonlyMap<string, RolePolicies>;
  /** Each function's role, by the function's logical id. */
  readonly functionRoles: ReadonlyMap<string, string>;
  /** Resource policies by the ARN they govern (an object ARN's bucket policy under its bucket). */
  readonly resourcePolicies: ReadonlyMap<string, PolicyDocument>;
}

const pseudo: Readonly<Record<string, string>> = {
  'AWS::Partition': 'aws',
  'AWS::Region': recordedRegion,
  'AWS::AccountId': recordedAccount,
  'AWS::URLSuffix': 'amazonaws.com',
  'AWS::NoValue': '',
};

/** The ARN of a resource of `type` whose physical id is `id` (each service's ARN format). */
export function arnOf(type: string, id: string): string {
  const regional = (service: string, rest: string) =>
    `arn:aws:${service}:${recordedRegion}:${recordedAccount}:${rest}`;
  switch (type) {
    case 'AWS::DynamoDB::Table':
      return regional('dynamodb', `table/${id}`);
    case 'AWS::SQS::Queue':
      return regional('sqs', id.split('/').at(-1) ?? id);
    case 'AWS::KMS::Key':
      return id.startsWith('arn:') ? id : regional('kms', `key/${id}`);
    case 'AWS::S3::Bucket':
      return `arn:aws:s3:::${id}`;
    case 'AWS::Cognito::UserPool':
      return regional('cognito-idp', `userpool/${id}`);
    case 'AWS::Lambda::Function':
      return regional('lambda', `function:${id}`);
    case 'AWS::IAM::Role':
      return `arn:aws:iam::${recordedAccount}:role/${id}`;
    case 'AWS::Logs::LogGroup':
      return regional('logs', `log-group:${id}:*`);
    case 'AWS::Events::Rule':
      return regional('events', `rule/${id}`);
    default:
      return id;
  }
}

/** Resolves `value`'s intrinsic functions; `physical` maps logical ids to physical ids. */
export function resolve(
  value: unknown,
  template: Template,
  physical: ReadonlyMap<string, string>,
): unknown {
  const again = (inner: unknown) => resolve(inner, template, physical);
  if (Array.isArray(value)) return value.map(again);
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value);
  const [[name, argument] = ['', undefined]] = entries;
  if (entries.length === 1) {
    switch (name) {
      case 'Ref': {
        const id = argument as string;
        return pseudo[id] ?? refOf(id, template, physical);
      }
      case 'Fn::GetAtt': {
        const [id, attribute] = (typeof argument === 'string' ? argument.split('.') : argument) as [
          string,
          string,
        ];
        return attributeOf(id, attribute, template, physical);
      }
      case 'Fn::Join': {
        const [separator, parts] = argument as [string, unknown[]];
        return (again(parts) as unknown[]).join(separator);
      }
      case 'Fn::Sub': {
        const [text, variables = {}] = (typeof argument === 'string' ? [argument] : argument) as [
          string,
          Record<string, unknown>,
        ];
        return text.replace(/\$\{([^}]+)\}/g, (_, key: string) => {
          if (key in variables) return String(again(variables[key]));
          if (pseudo[key] !== undefined) return pseudo[key];
          const [id, attribute] = key.split('.') as [string, string | undefined];
          return attribute === undefined
            ? refOf(id, template, physical)
            : attributeOf(id, attribute, template, physical);
        });
      }
      case 'Fn::Select': {
        const [index, list] = argument as [number, unknown];
        return (again(list) as unknown[])[Number(index)];
      }
      case 'Fn::Split': {
        const [separator, text] = argument as [string, unknown];
        return String(again(text)).split(separator);
      }
    }
  }
  return Object.fromEntries(entries.map(([key, inner]) => [key, again(inner)]));
}

function refOf(id: string, template: Template, physical: ReadonlyMap<string, string>): string {
  const type = template.Resources[id]?.Type ?? '';
  const name = physical.get(id) ?? `unresolved-${id}`;
  // A queue's Ref is its URL, a secret's and a topic's their ARN; the rest, their name or id.
  return type === 'AWS::SQS::Queue' && !name.startsWith('http')
    ? `https://sqs.${recordedRegion}.amazonaws.com/${recordedAccount}/${name}`
    : name;
}

function attributeOf(
  id: string,
  attribute: string,
  template: Template,
  physical: ReadonlyMap<string, string>,
): string {
  const type = template.Resources[id]?.Type ?? '';
  const arn = arnOf(type, physical.get(id) ?? `unresolved-${id}`);
  if (attribute === 'Arn') return arn;
  if (attribute === 'StreamArn') return `${arn}/stream/recorded`;
  if (attribute === 'QueueName') return arn.split(':').at(-1) ?? arn;
  return `unresolved-${id}.${attribute}`;
}

/** The roles, the functions' roles and the resource policies of a deployed `template`. */
export function stackPolicies(
  template: Template,
  physical: ReadonlyMap<string, string>,
): StackPolicies {
  const resolved = (value: unknown) => resolve(value, template, physical);
  const roles = new Map<string, RolePolicies>();
  const resourcePolicies = new Map<string, PolicyDocument>();
  const functionRoles = new Map<string, string>();
  const roleOf = (logicalId: string) => {
    let role = roles.get(logicalId);
    if (role === undefined) {
      role = {
        roleArn: arnOf('AWS::IAM::Role', physical.get(logicalId) ?? logicalId),
        identity: [],
      };
      roles.set(logicalId, role);
    }
    return role;
  };
  for (const [id, resource] of Object.entries(template.Resources)) {
    const properties = resource.Properties ?? {};
    switch (resource.Type) {
      case 'AWS::IAM::Role': {
        const role = roleOf(id);
        for (const inline of (properties.Policies ?? []) as Record<string, unknown>[]) {
          role.identity.push({
            name: `${id}/${String(inline.PolicyName)}`,
            policy: resolved(inline.PolicyDocument) as PolicyDocument,
          });
        }
        resourcePolicies.set(
          role.roleArn,
          resolved(properties.AssumeRolePolicyDocument) as PolicyDocument,
        );
        break;
      }
      case 'AWS::IAM::Policy':
        for (const { Ref } of properties.Roles as { Ref: string }[]) {
          roleOf(Ref).identity.push({
            name: id,
            policy: resolved(properties.PolicyDocument) as PolicyDocument,
          });
        }
        break;
      case 'AWS::Lambda::Function': {
        const [roleId] = (properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'];
        functionRoles.set(id, roleId);
        break;
      }
      case 'AWS::SQS::QueuePolicy':
        for (const queue of properties.Queues as unknown[]) {
          resourcePolicies.set(
            arnOf('AWS::SQS::Queue', String(resolved(queue))),
            resolved(properties.PolicyDocument) as PolicyDocument,
          );
        }
        break;
      case 'AWS::S3::BucketPolicy':
        resourcePolicies.set(
          arnOf('AWS::S3::Bucket', String(resolved(properties.Bucket))),
          resolved(properties.PolicyDocument) as PolicyDocument,
        );
        break;
      case 'AWS::KMS::Key':
        resourcePolicies.set(
          arnOf('AWS::KMS::Key', physical.get(id) ?? id),
          resolved(properties.KeyPolicy) as PolicyDocument,
        );
        break;
    }
  }
  return { roles, functionRoles, resourcePolicies };
}

/** The resource policy that governs `resourceArn` (a bucket's for its objects too). */
export function resourcePolicyOf(
  policies: ReadonlyMap<string, PolicyDocument>,
  resourceArn: string,
): PolicyDocument | undefined {
  const bucket = /^arn:aws:s3:::([^/]+)/.exec(resourceArn)?.[1];
  return policies.get(bucket === undefined ? resourceArn : `arn:aws:s3:::${bucket}`);
}

/**
 * `policy` with its `kms:EncryptionContext:<key>` conditions decided for one request's `context`:
 * a statement whose such conditions hold keeps the rest of its conditions, one whose do not is
 * dropped. The simulator matches a condition key with a variable part only in the `name/variable`
 * form (`aws:ResourceTag/…`), so it would ignore KMS's and deny every such grant; StringEquals and
 * StringLike are what the templates use (others throw, so the tier says so).
 */
export function withEncryptionContextDecided(
  policy: PolicyDocument,
  context: Readonly<Record<string, string | string[]>>,
): PolicyDocument {
  const requested = (key: string) =>
    Object.entries(context).find(([name]) => name.toLowerCase() === key.toLowerCase())?.[1];
  const glob = (pattern: string) =>
    new RegExp(
      `^${pattern
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .replaceAll('*', '.*')
        .replaceAll('?', '.')}$`,
    );
  const statements = policy.Statement.flatMap((statement) => {
    const conditions = (statement.Condition ?? {}) as Record<string, Record<string, unknown>>;
    const kept: Record<string, Record<string, unknown>> = {};
    for (const [operator, entries] of Object.entries(conditions)) {
      for (const [key, expected] of Object.entries(entries)) {
        if (!/^kms:encryptioncontext:/i.test(key)) {
          kept[operator] = { ...kept[operator], [key]: expected };
          continue;
        }
        if (operator !== 'StringEquals' && operator !== 'StringLike') {
          throw new Error(`The tier cannot decide ${operator} on ${key}.`);
        }
        const actual = requested(key);
        const matches = [expected]
          .flat()
          .some((one) =>
            operator === 'StringLike' ? glob(String(one)).test(String(actual)) : one === actual,
          );
        if (actual === undefined || !matches) return [];
      }
    }
    const { Condition: _decided, ...rest } = statement;
    return [Object.keys(kept).length === 0 ? rest : { ...rest, Condition: kept }];
  });
  return { ...policy, Statement: statements };
}
