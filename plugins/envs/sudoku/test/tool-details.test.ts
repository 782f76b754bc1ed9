/** A tool-using proposer (the coder): the executor sees its program and output in the full observation only. */
import { toolProposalConformance } from '@troupe/testing';
import { SudokuContribution } from '../src/index.js';

toolProposalConformance(new SudokuContribution());
toolProposalConformance(new SudokuContribution(), { config: { action: 'grid' } });
