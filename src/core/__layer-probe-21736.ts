import * as probed from '../host/create-host.js';
export const layerProbe = probed;
