/**
 * Routing, as a REST API matches a request line to a resource and method.
 */
import type { GatewayRoute, RouteMatch } from './gateway-types.ts';

/**
 * Matches a request line to a route as a REST API does: segment by segment, a `{name}` segment
 * taking any one non-empty segment; an unknown path or method matches nothing.
 */
export function createRouteMatcher(routes: readonly GatewayRoute[]) {
  const compiled = routes.map((route) => ({
    route,
    segments: route.resourcePath.split('/').slice(1),
  }));
  return (method: string | undefined, target: string | undefined): RouteMatch | undefined => {
    // The request target as sent, cut at the query; a fragment is never part of the path.
    const [beforeFragment = ''] = (target ?? '/').split('#', 1);
    const queryStart = beforeFragment.indexOf('?');
    const path = queryStart === -1 ? beforeFragment : beforeFragment.slice(0, queryStart);
    const query = queryStart === -1 ? '' : beforeFragment.slice(queryStart + 1);
    const segments = path.split('/').slice(1);
    for (const { route, segments: pattern } of compiled) {
      if (route.httpMethod !== method || pattern.length !== segments.length) continue;
      const parameters: Record<string, string> = Object.create(null);
      const matches = pattern.every((part, index) => {
        const segment = segments[index] as string;
        if (part.startsWith('{') && part.endsWith('}')) {
          parameters[part.slice(1, -1)] = segment;
          return segment !== '';
        }
        return part === segment;
      });
      if (matches) {
        const hasParameters = Object.keys(parameters).length > 0;
        return { route, path, pathParameters: hasParameters ? parameters : null, query };
      }
    }
    return undefined;
  };
}
