# nginx:alpine's stand-in: what it serves from and the port it exposes, as the official image.
ARG TOOLBOX
FROM ${TOOLBOX}
RUN mkdir -p /usr/share/nginx/html && echo 'Welcome to nginx!' > /usr/share/nginx/html/index.html
EXPOSE 80
CMD ["nginx", "-g", "daemon off;"]
