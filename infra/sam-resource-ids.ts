/**
 * `sam local` names a resource of a CDK template by its `aws:cdk:path` (`<stack>/<id>/Resource`
 * gives `<id>`: how `sam local invoke CreatePlant` finds its function), and warns for every
 * resource whose path is deeper, on every run: about 230 lines for this stack. SAM first reads the
 * resource's `SamResourceId` metadata (SAM CLI, `resource_metadata_normalizer.py`), so such
 * resources get their logical id there, the name SAM would fall back to anyway. Metadata only:
 * nothing deployed changes.
 */
import { CfnResource, type IAspect, Stack } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/** The deepest path SAM reads a name from: `<stack>/<id>/Resource`. */
const namedPathSegments = 3;

export class SamResourceIds implements IAspect {
  visit(node: IConstruct): void {
    if (!(node instanceof CfnResource)) return;
    if (node.node.path.split('/').length <= namedPathSegments) return;
    node.addMetadata('SamResourceId', Stack.of(node).resolve(node.logicalId));
  }
}
