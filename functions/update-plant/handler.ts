/** Lambda entry of `PUT and PATCH /plants/{id}`, configured once, at cold start. */
import { plantsFunctionDependencies } from '../shared/plants/plants-function.ts';
import { createHandler } from './create-handler.ts';

export const handler = createHandler(plantsFunctionDependencies('update-plant'));
