/** Jest's global teardown of the contract suite: stops the target the setup started. */
export default async function globalTeardown(): Promise<void> {
  await globalThis.plantStoreContractTarget?.stop();
  globalThis.plantStoreContractTarget = undefined;
}
