import fs from 'node:fs';
import { pixelSizesMarkdown } from '../src/modules/catalog/pixel-doc.ts';

fs.writeFileSync(new URL('../docs/pixel-sizes.md', import.meta.url), pixelSizesMarkdown());
