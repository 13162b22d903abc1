/**
 * The one place where the stack, as synthesized, is changed to deploy on MiniStack 1.5.33: each
 * change is a difference between the emulator and AWS, named here with its reason, applied to a
 * copy of the cloud assembly (the synthesized templates stay as they are, and cfn-lint and
 * cfn-guard check those), and returned so that the tier prints every one.
 *
 * - An alarm on metric math (`Metrics` with an expression) is refused by MiniStack's
 *   CloudFormation and fails the stack: removed. (Alarms on one metric are plain metric alarms
 *   in the stack itself: `infra/plain-metric-alarms.ts`.)
 * - `GenerateSecretString.ExcludePunctuation` is ignored by MiniStack, which would make a
 *   subscriber's secret with punctuation that is not base64: spelled out as `ExcludeCharacters`.
 * - The functions that check a webhook endpoint's URL run on the host here, as do the tests'
 *   receivers on 127.0.0.1: `WEBHOOK_ENDPOINT_URLS=local` lets them take loopback http receivers
 *   (they accept it only where `AWS_ENDPOINT_URL` is set, as MiniStack sets it).
 * - `AWS::WAFv2::WebACLAssociation` is a resource type MiniStack's CloudFormation does not know
 *   (the web ACL itself it makes): removed, so the per-client limits are not in front of the
 *   emulated stage. The local stand-in imitates them, and the template checks cover the rules.
 * - MiniStack reads a method's API key from the `x-api-key` header whatever the API's key source,
 *   so it would refuse every request: `ApiKeyRequired` is removed from the methods, and the usage
 *   plan does not throttle each client here. The plan is made, and the authorizer adds each
 *   client's key to it; the local stand-in imitates the throttling.
 * - There is no CodeDeploy: a stage with gradual deployments (prod) cannot deploy here at all.
 */
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';

/** One change made to the template, and why. */
export interface TemplateDifference {
  readonly resource: string;
  readonly change: string;
  readonly reason: string;
}

type Resource = { Type: string; Properties?: Record<string, unknown> };
type Template = { Resources: Record<string, Resource> };

/** The functions that read `WEBHOOK_ENDPOINT_URLS` (a URL check: create, change, delivery). */
const urlCheckingFunctions = ['CreateWebhookEndpoint', 'UpdateWebhookEndpoint', 'DeliverWebhook'];

/**
 * The changes MiniStack needs, made to `template` in place.
 * @throws Error for a stage that cannot deploy on MiniStack (CodeDeploy).
 */
export function adaptTemplateToMiniStack(template: Template): TemplateDifference[] {
  const differences: TemplateDifference[] = [];
  const codeDeploy = Object.entries(template.Resources).filter(([, resource]) =>
    resource.Type.startsWith('AWS::CodeDeploy::'),
  );
  if (codeDeploy.length > 0) {
    throw new Error(
      `MiniStack has no CodeDeploy, which this stage's gradual deployments need (${codeDeploy.length} resources): only a stage without them (dev) deploys there.`,
    );
  }
  for (const [id, resource] of Object.entries(template.Resources)) {
    const properties = resource.Properties ?? {};
    if (resource.Type === 'AWS::WAFv2::WebACLAssociation') {
      delete template.Resources[id];
      differences.push({
        resource: id,
        change: 'removed',
        reason: "MiniStack's CloudFormation does not know the resource type",
      });
    }
    if (resource.Type === 'AWS::CloudWatch::Alarm' && Array.isArray(properties.Metrics)) {
      delete template.Resources[id];
      differences.push({
        resource: id,
        change: 'removed',
        reason: `metric math (${String(properties.AlarmName ?? id)}) is refused by MiniStack's CloudFormation`,
      });
    }
    if (resource.Type === 'AWS::ApiGateway::Method' && properties.ApiKeyRequired === true) {
      delete properties.ApiKeyRequired;
      differences.push({
        resource: id,
        change: 'ApiKeyRequired removed',
        reason: 'MiniStack reads API keys from the x-api-key header only, not from the authorizer',
      });
    }
    const generate = properties.GenerateSecretString as Record<string, unknown> | undefined;
    if (resource.Type === 'AWS::SecretsManager::Secret' && generate?.ExcludePunctuation === true) {
      delete generate.ExcludePunctuation;
      generate.ExcludeCharacters = punctuation;
      differences.push({
        resource: id,
        change: 'ExcludePunctuation spelled out as ExcludeCharacters',
        reason: 'MiniStack ignores ExcludePunctuation',
      });
    }
    const environment = (properties.Environment as { Variables?: Record<string, unknown> })
      ?.Variables;
    if (
      resource.Type === 'AWS::Lambda::Function' &&
      environment !== undefined &&
      urlCheckingFunctions.some((name) => id.startsWith(name))
    ) {
      environment.WEBHOOK_ENDPOINT_URLS = 'local';
      differences.push({
        resource: id,
        change: 'WEBHOOK_ENDPOINT_URLS=local',
        reason: "its functions and the tests' receivers run on this machine's loopback",
      });
    }
  }
  return differences;
}

/** Every ASCII punctuation character, as Secrets Manager's ExcludePunctuation means it. */
const punctuation = '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~';

/**
 * A cloud assembly of one stage, made from the tests' synth of every stage (`sourceDirectory`,
 * with `manifest.<stage>.json`): the stage's template adapted to MiniStack, its assets linked,
 * and its template's asset hash made anew (or the CDK would reuse an upload of the original).
 * Resolves the differences.
 */
export function miniStackAssemblyOf(
  sourceDirectory: string,
  stageName: string,
  targetDirectory: string,
): TemplateDifference[] {
  const stackName = `PlantStore-${stageName}`;
  mkdirSync(targetDirectory, { recursive: true });
  for (const entry of readdirSync(sourceDirectory)) {
    if (entry.startsWith('asset.')) {
      symlinkSync(path.join(sourceDirectory, entry), path.join(targetDirectory, entry));
    }
  }
  for (const file of [`${stackName}.assets.json`, `${stackName}.metadata.json`, 'cdk.out']) {
    copyFileSync(path.join(sourceDirectory, file), path.join(targetDirectory, file));
  }
  copyFileSync(
    path.join(sourceDirectory, `manifest.${stageName}.json`),
    path.join(targetDirectory, 'manifest.json'),
  );
  const template = JSON.parse(
    readFileSync(path.join(sourceDirectory, `${stackName}.template.json`), 'utf8'),
  ) as Template;
  const differences = adaptTemplateToMiniStack(template);
  const body = JSON.stringify(template, undefined, 1);
  writeFileSync(path.join(targetDirectory, `${stackName}.template.json`), body);
  rehashTemplate(targetDirectory, stackName, createHash('sha256').update(body).digest('hex'));
  return differences;
}

/** Points the assembly's template asset (its key and object) at the template's new hash. */
function rehashTemplate(directory: string, stackName: string, hash: string): void {
  const assetsPath = path.join(directory, `${stackName}.assets.json`);
  const assets = JSON.parse(readFileSync(assetsPath, 'utf8')) as {
    files: Record<
      string,
      { source: { path?: string }; destinations: Record<string, { objectKey: string }> }
    >;
  };
  for (const [key, asset] of Object.entries(assets.files)) {
    if (asset.source.path !== `${stackName}.template.json`) continue;
    for (const destination of Object.values(asset.destinations)) {
      destination.objectKey = `${hash}.json`;
    }
    delete assets.files[key];
    assets.files[hash] = asset;
  }
  writeFileSync(assetsPath, JSON.stringify(assets, undefined, 1));
  const manifestPath = path.join(directory, 'manifest.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as {
    artifacts: Record<string, { properties?: { stackTemplateAssetObjectUrl?: string } }>;
  };
  const properties = manifest.artifacts[stackName]?.properties;
  if (properties?.stackTemplateAssetObjectUrl !== undefined) {
    properties.stackTemplateAssetObjectUrl = properties.stackTemplateAssetObjectUrl.replace(
      /[^/]+\.json$/,
      `${hash}.json`,
    );
  }
  writeFileSync(manifestPath, JSON.stringify(manifest, undefined, 1));
}
