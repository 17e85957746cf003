import { StrictMode } from 'react';
import { QueryClientProvider } from '@tanstack/react-query';
import { createRoot } from 'react-dom/client';
import { createBrowserRouter, RouterProvider } from 'react-router-dom';
import { App } from './App.js';
import { queryClient } from './query-client.js';
import { SessionProvider } from './session.js';
import './styles.css';

// A data router (one catch-all route; App has the routes) so a page can hold navigation
// while it has unsaved work (useBlocker).
const router = createBrowserRouter(
  [
    {
      path: '*',
      element: (
        <SessionProvider>
          <App />
        </SessionProvider>
      ),
    },
  ],
  { basename: '/dashboard' },
);

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router} />
    </QueryClientProvider>
  </StrictMode>,
);
