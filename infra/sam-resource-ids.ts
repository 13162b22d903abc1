/**
 * `SamResourceId` metadata (SAM CLI, `resource_metadata_normalizer.py`) for resources deeper than
 * `<stack>/<id>/Resource`, which `sam local` warns about on every run (~230 lines). Metadata only.
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
