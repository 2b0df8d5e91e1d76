/** A page no service worker controls: its fetches go to the network with nothing in between. */
import { ready } from './bodies.js';

ready();
