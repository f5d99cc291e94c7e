import { describe, expect, it } from 'vitest';
import { heapGrowingChosen, limitHeapGrowth } from '../src/processMemory.ts';

describe('the heap growth of long-running processes', () => {
  it("leaves a factor the operator chose on node's command line or in NODE_OPTIONS", () => {
    expect(heapGrowingChosen(['--heap-growing-percent=50'], undefined)).toBe(true);
    expect(heapGrowingChosen(['--heap_growing_percent', '50'], undefined)).toBe(true);
    expect(heapGrowingChosen([], '--max-old-space-size=512 --heap-growing-percent=35')).toBe(true);
    expect(limitHeapGrowth([], '--heap-growing-percent=35')).toBe(false);
  });

  it('sets its own factor otherwise, whatever other flags are given', () => {
    expect(heapGrowingChosen([], undefined)).toBe(false);
    expect(heapGrowingChosen(['--max-semi-space-size=4', '--heap-growing-percentile'], '')).toBe(false);
    expect(heapGrowingChosen([], '--max-old-space-size=512')).toBe(false);
    expect(limitHeapGrowth(['--enable-source-maps'], '--max-old-space-size=4096')).toBe(true);
  });
});
