/**
 * The one place where the synthesized stack is changed to deploy on MiniStack 1.5.33, on a copy
 * of the cloud assembly (cfn-lint and cfn-guard check the templates as synthesized). Each change
 * is a difference between the emulator and AWS, returned with its reason so the tier prints it;
 * docs/deploying.md lists them, with what covers each on AWS's side.
 */
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
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

/** The changes MiniStack needs, made to `template` (of `stackName`) in place. */
export function adaptTemplateToMiniStack(
  template: Template,
  stackName = 'PlantStore',
): TemplateDifference[] {
  const differences: TemplateDifference[] = [];
  for (const [id, resource] of Object.entries(template.Resources)) {
    const properties = resource.Properties ?? {};
    if (resource.Type.startsWith('AWS::CodeDeploy::')) {
      delete template.Resources[id];
      differences.push({
        resource: id,
        change: 'removed',
        reason: 'MiniStack has no CodeDeploy: a new version is live at once, with no canary',
      });
    }
    const update = (resource as { UpdatePolicy?: Record<string, unknown> }).UpdatePolicy;
    if (resource.Type === 'AWS::Lambda::Alias' && update?.CodeDeployLambdaAliasUpdate) {
      delete (resource as { UpdatePolicy?: unknown }).UpdatePolicy;
      differences.push({
        resource: id,
        change: 'CodeDeployLambdaAliasUpdate removed',
        reason: 'MiniStack has no CodeDeploy: a new version is live at once, with no canary',
      });
    }
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
    if (resource.Type === 'AWS::Lambda::Function') {
      const appId = `${stackName}.${id}`;
      properties.Environment = {
        Variables: Object.assign(environment ?? {}, { AWS_SDK_UA_APP_ID: appId }),
      };
      differences.push({
        resource: id,
        change: 'AWS_SDK_UA_APP_ID=<stack>.<function>',
        reason:
          "MiniStack gives every function the account's credentials, not its role's: the user agent names the caller",
      });
    }
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
 * A cloud assembly of `stageNames` for MiniStack, made from a synth (`sourceDirectory`: `cdk
 * synth`'s of those stages, or the tests' of every stage, with a `manifest.<stage>.json` each):
 * each template adapted, the assets linked, and each template's asset hash made anew (or the CDK
 * would reuse an upload of the original). Resolves the differences.
 */
export function miniStackAssemblyOf(
  sourceDirectory: string,
  stageNames: string | readonly string[],
  targetDirectory: string,
): TemplateDifference[] {
  const names = typeof stageNames === 'string' ? [stageNames] : stageNames;
  mkdirSync(targetDirectory, { recursive: true });
  for (const entry of readdirSync(sourceDirectory)) {
    if (entry.startsWith('asset.')) {
      symlinkSync(path.join(sourceDirectory, entry), path.join(targetDirectory, entry));
    }
  }
  // The tests' synth of every stage has a manifest per stage; a plain `cdk synth`, one.
  const stageManifest = path.join(sourceDirectory, `manifest.${names[0]}.json`);
  copyFileSync(
    names.length === 1 && existsSync(stageManifest)
      ? stageManifest
      : path.join(sourceDirectory, 'manifest.json'),
    path.join(targetDirectory, 'manifest.json'),
  );
  copyFileSync(path.join(sourceDirectory, 'cdk.out'), path.join(targetDirectory, 'cdk.out'));
  return names.flatMap((stageName) => {
    const stackName = `PlantStore-${stageName}`;
    for (const file of [`${stackName}.assets.json`, `${stackName}.metadata.json`]) {
      copyFileSync(path.join(sourceDirectory, file), path.join(targetDirectory, file));
    }
    const template = JSON.parse(
      readFileSync(path.join(sourceDirectory, `${stackName}.template.json`), 'utf8'),
    ) as Template;
    const differences = adaptTemplateToMiniStack(template, stackName);
    const body = JSON.stringify(template, undefined, 1);
    writeFileSync(path.join(targetDirectory, `${stackName}.template.json`), body);
    rehashTemplate(targetDirectory, stackName, createHash('sha256').update(body).digest('hex'));
    return differences;
  });
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
