import { editDistance, nearest } from '../../../src/config/nearest';

describe('nearest (the key a misspelt one was meant to be)', () => {
  it('counts a swap of neighbours as one edit', () => {
    expect(editDistance('outputFeilds', 'outputFields')).toBe(1);
    expect(editDistance('streamNme', 'streamName')).toBe(1);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('kitten', 'sitting')).toBe(3);
  });

  it('suggests a close name, ignoring case, and nothing for a name far from every known one', () => {
    const known = ['streamName', 'streamArn', 'region', 'outputFields', 'outputStream'];
    expect(nearest('outputFeilds', known)).toBe('outputFields');
    expect(nearest('StreamName', known)).toBe('streamName');
    expect(nearest('regoin', known)).toBe('region');
    expect(nearest('banana', known)).toBeUndefined();
    expect(nearest('x', [])).toBeUndefined();
  });
});
