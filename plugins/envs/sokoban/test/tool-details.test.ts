/** A tool-using proposer (the coder): the executor sees its program and output in the full observation only. */
import { toolProposalConformance } from '@troupe/testing';
import { SokobanContribution } from '../src/index.js';

toolProposalConformance(new SokobanContribution());
