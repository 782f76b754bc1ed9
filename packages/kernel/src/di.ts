/**
 * The kernel re-exports inversify and rxjs so that every plugin uses exactly one copy of each
 * (plugins import `ContainerModule`, `injectable`, `Observable` from `@troupe/kernel`).
 */
import 'reflect-metadata';
export { Container, ContainerModule, injectable, inject, optional, multiInject } from 'inversify';
export type { interfaces } from 'inversify';
export * as rx from 'rxjs';
export { Observable, Subject, defer, from, of, EMPTY, firstValueFrom, lastValueFrom } from 'rxjs';
