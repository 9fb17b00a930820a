// What a task provider may ask of the operator's prices: the worth of the work an upstream did when it
// did less than was held (fewer images, fewer usable assets), and a per-token model's token rates.

export interface TaskPrices {
  /** Per image, by resolution tier (and quality where the tier has them), in billing units. */
  imageUnits(model: string, resolution: string, quality: string | undefined, n: number): number;
  /** The output tokens one image of a per-token model counts as. */
  outputTokensPerImage(model: string): number;
  isPerToken(model: string): boolean;
  /** Per reviewed asset, in billing units. */
  perAssetUnits(model: string): number;
}
